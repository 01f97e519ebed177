/**
 * The generic script loader: every `<name>-<numKeys>.lua` under src/redis/<domain>/ becomes an ioredis command
 * `<name>` (EVALSHA with EVAL fallback, pipelinable); `<name>.lua` takes its number of keys as its first argument.
 * A line `--- @include lib/x` puts src/redis/lib/x.lua in its place (each file once, includes of includes first).
 * Script names are unique across domains; nothing here is edited to add one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis, Result } from 'ioredis';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    userCreate(profileKey: string, username: string, passwordHash: string, createdAt: number): Result<0 | 1, Context>;
    adminRevoke(admins: string, username: string): Result<-1 | 0 | 1, Context>;
    chatCreate(...keysThenArgs: (string | number)[]): Result<number, Context>;
    chatSend(...keysThenArgs: (string | number)[]): Result<(number | string)[], Context>;
    chatGapDone(gapsKey: string, member: string, from: number, to: number): Result<0 | 1, Context>;
    chatJoin(...keysThenArgs: (string | number)[]): Result<number[], Context>;
    chatLeave(...keysThenArgs: (string | number)[]): Result<number, Context>;
    chatMarkRead(...keysThenArgs: (string | number)[]): Result<number, Context>;
    chatRead(...keysThenArgs: (string | number)[]): Result<(number | string)[], Context>;
    chatState(meta: string, seq: string, members: string, viewer: string): Result<number[], Context>;
    userChats(chats: string, version: string, op: 'add' | 'remove', chatId: string, bell: string): Result<0 | 1, Context>;
    contactsTouch(contacts: string, cap: number, ...names: string[]): Result<number, Context>;
    doorbellRing(head: string, bell: string, data: string): Result<[number, number], Context>;
    notify(inbox: string, inboxSeq: string, kind: string, text: string, data: string, cap: number, bell: string): Result<number, Context>;
    lockAcquire(owner: string, fence: string, token: string, leaseMs: number): Result<number, Context>;
    lockRelease(owner: string, token: string, bell: string): Result<0 | 1, Context>;
    lockExtend(owner: string, token: string, leaseMs: number): Result<0 | 1, Context>;
    lockHandoff(owner: string, fence: string, token: string, waiterToken: string, leaseMs: number): Result<number, Context>;
    semaphoreAcquire(holders: string, limit: number, timeoutMs: number, holder: string): Result<0 | 1, Context>;
    semaphoreRefresh(holders: string, timeoutMs: number, holder: string): Result<0 | 1, Context>;
    queueEnqueue(ready: string, delayed: string, task: string, delayMs: number): Result<1, Context>;
    queuePromote(ready: string, delayed: string, max: number): Result<[number, number], Context>;
    queueTake(ready: string, active: string, max: number): Result<string[], Context>;
    queueRetry(active: string, delayed: string, failed: string, taken: string, returned: string, delayMs: number, error: string, failedCap: number): Result<0 | 1, Context>;
    queueHeartbeat(workers: string, workerId: string, timeoutMs: number): Result<string[], Context>;
    queueRequeue(active: string, ready: string, workers: string, failed: string, workerId: string, timeoutMs: number, failedCap: number): Result<number, Context>;
    scheduleCreate(...keysThenArgs: (string | number)[]): Result<number, Context>;
    geoLookup(ranges: string, cities: string, hex: string): Result<[string, string, string, string | null] | null, Context>;
    geoSwap(...keys: string[]): Result<1, Context>;
    logsReserve(held: string, record: string, bytes: number, max: number, filename: string, uploader: string, processors: number, now: number): Result<0 | 1, Context>;
    logsRelease(held: string, record: string, data: string, shares: string, status: string, keepMs: number): Result<0 | 1, Context>;
    logsShareDone(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Result<number[], Context>;
    counterAdd(...keysThenArgs: (string | number)[]): Result<1, Context>;
    counterAdmit(registry: string, max: number, reserved: number, ...names: string[]): Result<number[], Context>;
    counterClean(hash: string, cutoff: number): Result<number, Context>;
    statsAdd(...keysThenArgs: (string | number)[]): Result<[string, string], Context>;
    logWrite(...keysThenArgs: (string | number)[]): Result<1, Context>;
    scheduleClaim(record: string): Result<(string | null)[], Context>;
    scheduleFinish(...keysThenArgs: (string | number)[]): Result<0 | 1, Context>;
    scheduleCancel(...keysThenArgs: (string | number)[]): Result<number, Context>;
  }
}

const DIR = fileURLToPath(new URL('.', import.meta.url));
const INCLUDE = /^--- @include (\S+)\s*$/gm;

/** The script's source with its includes in place; each included file once. */
function withIncludes(file: string, included = new Set<string>()): string {
  return readFileSync(file, 'utf8').replace(INCLUDE, (_line, name: string) => {
    const lib = path.join(DIR, `${name}.lua`);
    if (included.has(lib)) return '';
    included.add(lib);
    return withIncludes(lib, included);
  });
}

interface ScriptSource {
  name: string;
  /** Undefined: the caller passes the number of keys first. */
  numberOfKeys: number | undefined;
  lua: string;
}

function loadScripts(): ScriptSource[] {
  const scripts = new Map<string, ScriptSource & { file: string }>();
  for (const relative of readdirSync(DIR, { recursive: true, encoding: 'utf8' })) {
    if (!relative.endsWith('.lua') || relative.startsWith(`lib${path.sep}`)) continue;
    const match = /^([A-Za-z]\w*?)(?:-(\d+))?\.lua$/.exec(path.basename(relative));
    if (!match) throw new Error(`src/redis/${relative}: a script is named <name>-<numKeys>.lua or <name>.lua`);
    const name = match[1]!;
    const keys = match[2];
    const clash = scripts.get(name);
    if (clash) throw new Error(`src/redis/${relative}: script name "${name}" is taken by src/redis/${clash.file}`);
    const file = path.join(DIR, relative);
    scripts.set(name, { name, numberOfKeys: keys === undefined ? undefined : Number(keys), lua: withIncludes(file), file: relative });
  }
  return [...scripts.values()];
}

const SCRIPTS = loadScripts();

export function defineScripts(client: Redis | Cluster): void {
  for (const { name, numberOfKeys, lua } of SCRIPTS) client.defineCommand(name, { numberOfKeys, lua });
}
