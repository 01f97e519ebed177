/**
 * Loads every Lua script in ./lua as an ioredis command (EVALSHA with EVAL fallback, pipelinable); shared
 * helpers live in ./lua/lib and are put in front of the scripts that use them.
 * Each file's header says its KEYS, ARGV and return values; the declarations below give them types.
 */
import { readFileSync } from 'node:fs';
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

const SCRIPTS = {
  userCreate: { file: 'user-create.lua', numberOfKeys: 1 },
  adminRevoke: { file: 'admin-revoke.lua', numberOfKeys: 1 },
  chatCreate: { file: 'chat-create.lua', numberOfKeys: 6, uses: ['now.lua'] },
  chatSend: { file: 'chat-send.lua', numberOfKeys: 8, uses: ['now.lua', 'trim-read.lua'] },
  chatGapDone: { file: 'chat-gap-done.lua', numberOfKeys: 1 },
  chatJoin: { file: 'chat-join.lua', numberOfKeys: 5 },
  chatLeave: { file: 'chat-leave.lua', numberOfKeys: 9, uses: ['trim-read.lua'] },
  chatMarkRead: { file: 'chat-mark-read.lua', numberOfKeys: 4, uses: ['trim-read.lua'] },
  chatRead: { file: 'chat-read.lua', numberOfKeys: 4 },
  chatState: { file: 'chat-state.lua', numberOfKeys: 3 },
  userChats: { file: 'user-chats.lua', numberOfKeys: 2, uses: ['now.lua'] },
  contactsTouch: { file: 'contacts-touch.lua', numberOfKeys: 1 },
  doorbellRing: { file: 'doorbell-ring.lua', numberOfKeys: 1 },
  notify: { file: 'notify.lua', numberOfKeys: 2, uses: ['now.lua'] },
  lockAcquire: { file: 'lock-acquire.lua', numberOfKeys: 2 },
  lockRelease: { file: 'lock-release.lua', numberOfKeys: 1 },
  lockExtend: { file: 'lock-extend.lua', numberOfKeys: 1 },
  lockHandoff: { file: 'lock-handoff.lua', numberOfKeys: 2 },
  semaphoreAcquire: { file: 'semaphore-acquire.lua', numberOfKeys: 1, uses: ['now.lua'] },
  semaphoreRefresh: { file: 'semaphore-refresh.lua', numberOfKeys: 1, uses: ['now.lua'] },
  queueEnqueue: { file: 'queue-enqueue.lua', numberOfKeys: 2, uses: ['now.lua', 'queue.lua'] },
  queuePromote: { file: 'queue-promote.lua', numberOfKeys: 2, uses: ['now.lua', 'queue.lua'] },
  queueTake: { file: 'queue-take.lua', numberOfKeys: 2 },
  queueRetry: { file: 'queue-retry.lua', numberOfKeys: 3, uses: ['now.lua', 'queue.lua'] },
  queueHeartbeat: { file: 'queue-heartbeat.lua', numberOfKeys: 1, uses: ['now.lua'] },
  queueRequeue: { file: 'queue-requeue.lua', numberOfKeys: 4, uses: ['now.lua', 'queue.lua'] },
  scheduleCreate: { file: 'schedule-create.lua', numberOfKeys: 4, uses: ['now.lua', 'queue.lua'] },
  geoLookup: { file: 'geo-lookup.lua', numberOfKeys: 2 },
  geoSwap: { file: 'geo-swap.lua', numberOfKeys: 7 },
  logsReserve: { file: 'logs-reserve.lua', numberOfKeys: 2 },
  logsRelease: { file: 'logs-release.lua', numberOfKeys: 4 },
  // null: the caller passes the number of keys first (the visit sets vary).
  logsShareDone: { file: 'logs-share-done.lua', numberOfKeys: null },
  counterAdd: { file: 'counter-add.lua', numberOfKeys: 7 },
  counterAdmit: { file: 'counter-admit.lua', numberOfKeys: 1 },
  counterClean: { file: 'counter-clean.lua', numberOfKeys: 1 },
  statsAdd: { file: 'stats-add.lua', numberOfKeys: 4, uses: ['rotate.lua'] },
  logWrite: { file: 'log-write.lua', numberOfKeys: 5, uses: ['rotate.lua'] },
  scheduleClaim: { file: 'schedule-claim.lua', numberOfKeys: 1 },
  scheduleFinish: { file: 'schedule-finish.lua', numberOfKeys: 3, uses: ['now.lua', 'schedule.lua'] },
  scheduleCancel: { file: 'schedule-cancel.lua', numberOfKeys: 5, uses: ['now.lua', 'schedule.lua'] },
} as const satisfies Record<string, { file: string; numberOfKeys: number | null; uses?: readonly string[] }>;

const read = (path: string) => readFileSync(new URL(`./lua/${path}`, import.meta.url), 'utf8');

// A script that `uses` helpers from lua/lib gets their source in front of its own (EVAL has no imports).
const sources = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, definition]) => [
    name,
    {
      numberOfKeys: definition.numberOfKeys ?? undefined,
      lua: [...('uses' in definition ? definition.uses : []).map((lib) => read(`lib/${lib}`)), read(definition.file)].join('\n'),
    },
  ]),
);

export function defineScripts(client: Redis | Cluster): void {
  for (const [name, definition] of Object.entries(sources)) client.defineCommand(name, definition);
}
