/** The coordination domain's scripts (locks, semaphores, task queues), with named arguments. */
import type { RedisClient } from '../clients.js';
import { script } from '../scripts.js';
import { STATUS } from '../status.js';
import type { CoordinationKeys } from './keys.js';

const acquireLockScript = script<[number, number?]>('acquireLock');
const extendLockScript = script<0 | 1>('extendLock');
const handOffLockScript = script<number>('handOffLock');
const releaseLockScript = script<0 | 1>('releaseLock');
const acquireSemaphoreScript = script<0 | 1>('acquireSemaphore');
const refreshSemaphoreScript = script<0 | 1>('refreshSemaphore');
const enqueueTaskScript = script<1>('enqueueTask');
const promoteTasksScript = script<[number, number]>('promoteTasks');
const takeTasksScript = script<string[]>('takeTasks');
const retryTaskScript = script<0 | 1>('retryTask');
const heartbeatScript = script<string[]>('heartbeat');
const requeueTasksScript = script<number>('requeueTasks');

/** Takes lock `name` with token `token` for `leaseMs`: its fencing token, or the ms left on the holder's lease. */
export async function acquireLock(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { name: string; token: string; leaseMs: number },
): Promise<{ fence: number } | { heldForMs: number }> {
  const lock = k.lock(a.name);
  const [fence, heldForMs] = await acquireLockScript(redis, [lock.owner, lock.fence], [a.token, a.leaseMs]);
  return fence > 0 ? { fence } : { heldForMs: heldForMs! };
}

/** Gives the holder `token` of lock `name` `leaseMs` from now; false when its lease had ended. */
export async function extendLock(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { name: string; token: string; leaseMs: number },
): Promise<boolean> {
  return (await extendLockScript(redis, [k.lock(a.name).owner], [a.token, a.leaseMs])) === 1;
}

/** Passes lock `name` from `token` to `waiterToken` with a new lease: the waiter's fencing token, or 0 when the lease had ended. */
export function handOffLock(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { name: string; token: string; waiterToken: string; leaseMs: number },
): Promise<number> {
  const lock = k.lock(a.name);
  return handOffLockScript(redis, [lock.owner, lock.fence], [a.token, a.waiterToken, a.leaseMs]);
}

/** Frees lock `name` held with `token` and rings its doorbell; false when the lease had ended. */
export async function releaseLock(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { name: string; token: string },
): Promise<boolean> {
  const lock = k.lock(a.name);
  return (await releaseLockScript(redis, [lock.owner], [a.token, lock.bell])) === 1;
}

/** A place for `holder` in semaphore `name` of `limit` (dropped after `timeoutMs` without a refresh); false when full. */
export async function acquireSemaphore(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { name: string; limit: number; timeoutMs: number; holder: string },
): Promise<boolean> {
  return (await acquireSemaphoreScript(redis, [k.semaphore(a.name)], [a.limit, a.timeoutMs, a.holder])) === 1;
}

/** Gives `holder` of semaphore `name` `timeoutMs` from now; false when it had been dropped. */
export async function refreshSemaphore(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { name: string; timeoutMs: number; holder: string },
): Promise<boolean> {
  return (await refreshSemaphoreScript(redis, [k.semaphore(a.name)], [a.timeoutMs, a.holder])) === 1;
}

/** Adds `task` (its JSON) to `queue`, ready now or after `delayMs`. */
export async function enqueueTask(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { queue: string; task: string; delayMs: number },
): Promise<void> {
  const q = k.queue(a.queue);
  await enqueueTaskScript(redis, [q.ready, q.delayed], [a.task, a.delayMs]);
}

/** Moves up to `max` due tasks of `queue` to its ready list: how many, and ms until the next is due (-1: none). */
export async function promoteTasks(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { queue: string; max: number },
): Promise<{ moved: number; nextDueMs: number }> {
  const q = k.queue(a.queue);
  const [moved, nextDueMs] = await promoteTasksScript(redis, [q.ready, q.delayed], [a.max]);
  return { moved, nextDueMs };
}

/** Moves up to `max` ready tasks of `queue` to the active list of `workerId`, without waiting; their JSON. */
export function takeTasks(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { queue: string; workerId: string; max: number },
): Promise<string[]> {
  const q = k.queue(a.queue);
  return takeTasksScript(redis, [q.ready, q.active(a.workerId)], [a.max]);
}

/**
 * Takes `taken` off the active list of `workerId` and puts `returned` back after `delayMs`, or (delayMs -1) files it
 * as failed with `error`; false when the task was no longer on the list (nothing written).
 */
export async function retryTask(
  redis: RedisClient,
  k: CoordinationKeys,
  a: {
    queue: string;
    workerId: string;
    taken: string;
    returned: string;
    delayMs: number;
    error: string;
    failedKept: number;
  },
): Promise<boolean> {
  const q = k.queue(a.queue);
  const reply = await retryTaskScript(
    redis,
    [q.active(a.workerId), q.delayed, q.failed],
    [a.taken, a.returned, a.delayMs, a.error, a.failedKept],
  );
  return reply === 1;
}

/** Records `workerId` of `queue` as alive; the workers quiet for longer than `timeoutMs`. */
export function heartbeat(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { queue: string; workerId: string; timeoutMs: number },
): Promise<string[]> {
  return heartbeatScript(redis, [k.queue(a.queue).workers], [a.workerId, a.timeoutMs]);
}

/**
 * Returns the tasks of `workerId` to `queue` and forgets the worker: how many went back, or 'alive' when the worker
 * has heartbeated within `timeoutMs` since (-1: it is stopping itself, so its tasks count no attempt).
 */
export async function requeueTasks(
  redis: RedisClient,
  k: CoordinationKeys,
  a: { queue: string; workerId: string; timeoutMs: number; failedKept: number },
): Promise<number | 'alive'> {
  const q = k.queue(a.queue);
  const returned = await requeueTasksScript(
    redis,
    [q.active(a.workerId), q.ready, q.workers, q.failed],
    [a.workerId, a.timeoutMs, a.failedKept],
  );
  return returned === STATUS.ALIVE ? 'alive' : returned;
}
