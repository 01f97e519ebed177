/**
 * The generic script loader: every `<name>-<numKeys>.lua` under src/redis/<domain>/ becomes an ioredis command
 * `<name>` (EVALSHA with EVAL fallback, pipelinable); `<name>.lua` takes its number of keys as its first argument.
 * A line `--- @include lib/x` puts src/redis/lib/x.lua in its place (each file once, includes of includes first),
 * and a script that names STATUS gets the status table of status.ts. Script names are unique across domains;
 * nothing here is edited to add one: redis/<domain>/commands.ts calls them through `script(name)`.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, Command, type ChainableCommander, type Redis } from 'ioredis';
import { statusLua } from './status.js';

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
    const source = withIncludes(file);
    const lua = /\bSTATUS\./.test(source) ? `${statusLua()}\n${source}` : source;
    scripts.set(name, { name, numberOfKeys: keys === undefined ? undefined : Number(keys), lua, file: relative });
  }
  return [...scripts.values()];
}

const SCRIPTS = new Map(loadScripts().map((s) => [s.name, s]));

export function defineScripts(client: Redis | Cluster): void {
  for (const { name, numberOfKeys, lua } of SCRIPTS.values()) client.defineCommand(name, { numberOfKeys, lua });
}

type Arg = string | number | Buffer;
type Runner = Record<string, (...args: Arg[]) => Promise<unknown>>;
/** Replies as strings, as ioredis's defined commands give them. */
const UTF8 = { replyEncoding: 'utf8' as const };

/** A script, run on a client (or queued in a pipeline) with its keys and arguments, resolving to `T`. */
export interface Script<T> {
  (redis: Redis | Cluster, keys: readonly string[], args: readonly Arg[]): Promise<T>;
  queue(pipeline: ChainableCommander, keys: readonly string[], args: readonly Arg[]): void;
}

/** The script `name` (src/redis/<domain>/<name>-<n>.lua); throws at once for a name no file has. */
export function script<T>(name: string): Script<T> {
  const source = SCRIPTS.get(name);
  if (!source) throw new Error(`no script named "${name}" under src/redis`);
  const argv = (keys: readonly string[], args: readonly Arg[]): Arg[] =>
    source.numberOfKeys === undefined ? [keys.length, ...keys, ...args] : [...keys, ...args];
  const sha = createHash('sha1').update(source.lua).digest('hex');
  const numberOfKeys = source.numberOfKeys;
  const defined = (redis: Redis | Cluster, keys: readonly string[], args: readonly Arg[]) =>
    (redis as unknown as Runner)[name]!(...argv(keys, args)) as Promise<T>;
  /** Clients the script ran on through the defined command, which sends it whole to a connection new to it. */
  const loaded = new WeakSet<Redis>();
  // Once it ran on a (one-server) client, an EVALSHA of its own rather than the defined command, whose every call
  // makes a promise more (its NOSCRIPT catch) and a closure (to send EVAL first on each connection): a server without
  // the script (restarted, failed over, flushed) answers NOSCRIPT, and then the defined command sends it whole and
  // settles this one. A cluster's masters each learn each script, so a cluster client keeps the defined command,
  // which sends it whole to each the first time. The clients (clients.ts) have no ioredis keyPrefix: Keyspace
  // prefixes the keys.
  const run = (redis: Redis | Cluster, keys: readonly string[], args: readonly Arg[]): Promise<T> => {
    if (redis instanceof Cluster) return defined(redis, keys, args);
    if (!loaded.has(redis)) return defined(redis, keys, args).then((reply) => (loaded.add(redis), reply));
    const command = new Command('evalsha', [sha, numberOfKeys ?? keys.length, ...keys, ...args], UTF8);
    const reject = command.reject;
    command.reject = (err: Error) => {
      if (!err.message.includes('NOSCRIPT')) return reject(err);
      defined(redis, keys, args).then(command.resolve, reject);
    };
    return redis.sendCommand(command) as Promise<T>;
  };
  run.queue = (pipeline: ChainableCommander, keys: readonly string[], args: readonly Arg[]) =>
    void (pipeline as unknown as Runner)[name]!(...argv(keys, args));
  return run;
}
