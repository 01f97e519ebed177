/**
 * The coordination domain's door to Redis: locks, semaphores and task queues, each step one script or one command
 * on its object's slot. The services of src/services/coordination/ reach Redis only through coordinationCommands().
 */
import type { Logger } from 'pino';
import { closeRedisClient, createBlockingClient, createRedlockClient, type RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import type { Head } from '../mailbox/commands.js';
import {
  reentrantEntered,
  reentrantState,
  reentrantValue,
  type ReentrantBusy,
  type ReentrantEntry,
  type ReentrantReply,
  type ReentrantTry,
} from '../reentrant.js';
import type { ReplicaWait } from '../replicas.js';
import { script } from '../scripts.js';
import { STATUS } from '../status.js';
import { coordinationKeys } from './keys.js';

const acquireLockScript = script<[0 | 1, number?]>('acquireLock');
const fenceLockScript = script<number>('fenceLock');
const extendLockScript = script<0 | 1>('extendLock');
const handOffLockScript = script<0 | 1>('handOffLock');
const releaseLockScript = script<0 | 1 | 2>('releaseLock');
const acquireReadLockScript = script<[number, number?]>('acquireReadLock');
const acquireWriteLockScript = script<[number, number?]>('acquireWriteLock');
const extendRwLockScript = script<0 | 1>('extendRwLock');
const releaseRwLockScript = script<0 | 1>('releaseRwLock');
const releaseRedlockScript = script<0 | 1>('releaseRedlock');
const handOffRedlockScript = script<0 | 1>('handOffRedlock');
const acquireReentrantScript = script<ReentrantReply>('acquireReentrant');
const releaseReentrantScript = script<number>('releaseReentrant');
const extendReentrantScript = script<0 | 1>('extendReentrant');
const fenceReentrantScript = script<number>('fenceReentrant');
const acquireSemaphoreScript = script<0 | 1>('acquireSemaphore');
const refreshSemaphoreScript = script<0 | 1>('refreshSemaphore');
const enqueueTaskScript = script<1>('enqueueTask');
const promoteTasksScript = script<[number, number, number]>('promoteTasks');
const takeTasksScript = script<string[]>('takeTasks');
const ackTaskScript = script<Settled>('ackTask');
const retryTaskScript = script<Settled>('retryTask');
const heartbeatScript = script<string[]>('heartbeat');
const requeueTasksScript = script<number>('requeueTasks');
const retryFailedTaskScript = script<0 | 1>('retryFailedTask');

export type CoordinationCommands = ReturnType<typeof coordinationCommands>;

/**
 * One of RedLock's independent servers (REDLOCK_NODES): lock `name`'s key there, taken, extended and freed by token.
 * A command the server does not answer in time, or sent while it is disconnected, rejects.
 */
export interface RedlockNode {
  /** Takes the key with `token` for `leaseMs` (SET NX PX); false when someone holds it. */
  acquire(a: { name: string; token: string; leaseMs: number }): Promise<boolean>;
  /** Gives the key held with `token` `leaseMs` from now (extendLock); false when it holds another token or none. */
  extend(a: { name: string; token: string; leaseMs: number }): Promise<boolean>;
  /** Deletes the key held with `token` (releaseRedlock); false when it holds another token or none. */
  release(a: { name: string; token: string }): Promise<boolean>;
  /**
   * Passes the key held with `token` to `waiterToken` for `leaseMs` (handOffRedlock); false when it holds another
   * token or none (nothing written).
   */
  handOff(a: { name: string; token: string; waiterToken: string; leaseMs: number }): Promise<boolean>;
  /**
   * How long (ms) the server had been up when this connection to it last became ready, as its INFO said, plus the
   * time since (performance.now()); undefined while disconnected or not yet read. A server that restarted shows it.
   */
  uptimeMs(): number | undefined;
}

/** A failed read of a RedLock server's uptime is tried again this long after. */
const UPTIME_RETRY_MS = 1000;

/**
 * RedLock's servers, one connection each (src/redis/clients.ts createRedlockClient), and how to close them. Every
 * (re)connection reads the server's uptime (INFO server): a server that restarted while disconnected says so.
 */
export function redlockCommands(a: { urls: string[]; space: Keyspace; timeoutMs: number; log: Logger }): {
  nodes: RedlockNode[];
  close(): Promise<void>;
} {
  const k = coordinationKeys(a.space);
  const clients = a.urls.map((url, i) => createRedlockClient(url, a.log, `redlock:${i}`, a.timeoutMs));
  const nodes = clients.map((client, i): RedlockNode => {
    /** When the server started, on performance.now()'s clock; undefined: unknown. */
    let startedAt: number | undefined;
    let connection = 0;
    const readUptime = (serial: number) => {
      client.info('server').then(
        (info) => {
          const seconds = /^uptime_in_seconds:(\d+)/m.exec(info)?.[1];
          if (serial !== connection || seconds === undefined) return;
          // Whole seconds between two whole-second clock readings (now and the start): the server may have been up
          // up to a second less than it says. Counted that way, never as older than it is.
          startedAt = performance.now() - Math.max(0, Number(seconds) - 1) * 1000;
          a.log.info({ client: `redlock:${i}`, uptimeSeconds: Number(seconds) }, 'redlock server connected');
        },
        () => {
          if (serial === connection)
            setTimeout(() => serial === connection && readUptime(serial), UPTIME_RETRY_MS).unref();
        },
      );
    };
    client.on('ready', () => {
      startedAt = undefined;
      readUptime(++connection);
    });
    client.on('close', () => {
      startedAt = undefined;
      connection++;
    });
    return {
      acquire: async ({ name, token, leaseMs }) =>
        (await client.set(k.redlock(name), token, 'PX', leaseMs, 'NX')) === 'OK',
      extend: async ({ name, token, leaseMs }) =>
        (await extendLockScript(client, [k.redlock(name)], [token, leaseMs])) === 1,
      release: async ({ name, token }) => (await releaseRedlockScript(client, [k.redlock(name)], [token])) === 1,
      handOff: async ({ name, token, waiterToken, leaseMs }) =>
        (await handOffRedlockScript(client, [k.redlock(name)], [token, waiterToken, leaseMs])) === 1,
      uptimeMs: () => (startedAt === undefined ? undefined : performance.now() - startedAt),
    };
  });
  return { nodes, close: async () => void (await Promise.all(clients.map(closeRedisClient))) };
}

/** A task settled (acknowledged, retried or filed): whether it was still the worker's, and the tasks taken in its place. */
export interface SettledTask {
  /** False when the task was no longer on the worker's list (returned to the queue when it was taken for dead). */
  done: boolean;
  /** The JSON of the ready tasks moved to the worker's list in its place, first to run first. */
  taken: string[];
}
type Settled = [0 | 1, string[]];
const settled = ([done, taken]: Settled): SettledTask => ({ done: done === 1, taken });

/** A connection of its own that waits for tasks (BLMOVE holds it until it returns). */
export interface BlockingTakes {
  /** Waits up to `timeoutSeconds` for a ready task of `queue` and moves it to `workerId`'s active list; its JSON. */
  takeTask(a: { queue: string; workerId: string; timeoutSeconds: number }): Promise<string | null>;
  /** Ends a waiting take at once (ioredis rejects it, or never settles it: callers race it against their stop). */
  interrupt(): void;
  close(): Promise<void>;
}

/**
 * `replicated` (src/redis/replicas.ts): a lock's lease is taken, handed over or extended only once the replicas
 * asked for have it, so that a failover never shows a lock free that someone holds. A take or hand-over they do not
 * confirm in time is given back (the taker tries again); an extension, reported `unconfirmed`, is sure only until
 * the lease's previous end.
 */
export function coordinationCommands(redis: RedisClient, space: Keyspace, replicated: ReplicaWait, log: Logger) {
  const k = coordinationKeys(space);
  /**
   * A take the replicas confirmed: `taken`; else it is given back: `unconfirmed`. Without replicas to wait for, at
   * once (no promise: the sequential take's answer is one microtask sooner).
   */
  const keepTake = (owner: string, token: string) =>
    replicated.replicas === 0 ? ('taken' as const) : confirmTake(owner, token);
  const confirmTake = async (owner: string, token: string) => {
    if (await replicated(owner)) return 'taken' as const;
    await releaseLockScript(redis, [owner], [token]);
    return 'unconfirmed' as const;
  };
  type Take = 'taken' | 'held' | { heldForMs: number } | 'unconfirmed';
  /** acquireLock.lua's take of lock `owner` (see acquireLock). */
  const takeOrRegister = (owner: string, a: { token: string; leaseMs: number; others: boolean }): Promise<Take> =>
    acquireLockScript(redis, [owner], [a.token, a.leaseMs, a.others ? 1 : 0]).then(
      ([taken, heldForMs]): Take | Promise<Take> =>
        taken === 1 ? keepTake(owner, a.token) : { heldForMs: heldForMs! },
    );
  /**
   * A reentrant lock's answer, kept: a take (depth 1) once the replicas confirmed it, else given back
   * (`unconfirmed`); a re-entry or a refusal as it is. Without replicas to wait for, at once (no promise).
   */
  type Entered = ReentrantEntry | ReentrantBusy | 'unconfirmed';
  const keepEntry = (lock: string, entry: ReentrantEntry | ReentrantBusy): Entered | Promise<Entered> =>
    !('token' in entry) || entry.depth > 1 || replicated.replicas === 0 ? entry : confirmEntry(lock, entry);
  const confirmEntry = async (lock: string, entry: ReentrantEntry) => {
    if (await replicated(lock)) return entry;
    await releaseReentrantScript(redis, [lock], [entry.token]);
    return 'unconfirmed' as const;
  };
  /** acquireReentrant.lua's take or re-entry of reentrant lock `lock` (see acquireReentrant). */
  const enterReentrant = (lock: string, a: ReentrantTry): Promise<Entered> =>
    acquireReentrantScript(redis, [lock], [a.owner, a.token, a.leaseMs, a.waits ? 1 : 0, a.others ? 1 : 0]).then(
      (reply): Entered | Promise<Entered> => keepEntry(lock, reentrantEntered(reply, a.owner)),
    );
  return {
    /** What waiters of lock `name` watch: its owner key, and the doorbell its releases ring. */
    lockHead(a: { name: string }): Head {
      const owner = k.lockOwner(a.name);
      return { key: owner, channel: owner };
    },

    /**
     * Takes lock `name` with `token` for `leaseMs`: `taken`; refused, `held` for a caller that will not wait, or the
     * ms left on the holder's lease for one that `waits` (registered as a waiter in the same step, so that the
     * holder's release rings); or `unconfirmed` when the replicas did not confirm the take in time (it was given
     * back). A `first` try with no `others` (other waiters of this process: the lock is taken marked for them) is one
     * SET NX PX; a waiter it refuses, and every other try (contended: one round trip, as its rivals' tries), go
     * through acquireLock.lua.
     */
    acquireLock(a: {
      name: string;
      token: string;
      leaseMs: number;
      waits: boolean;
      others: boolean;
      first: boolean;
    }): Promise<Take> {
      // Not async, and only the owner key built: the uncontended take is every holder's first step.
      const owner = k.lockOwner(a.name);
      if (!a.first || a.others) return takeOrRegister(owner, a);
      // OK when taken, null when held (no GET: the holder's value would not be used).
      return redis
        .set(owner, a.token, 'PX', a.leaseMs, 'NX')
        .then((reply): Take | Promise<Take> =>
          reply === 'OK' ? keepTake(owner, a.token) : a.waits ? takeOrRegister(owner, a) : 'held',
        );
    },

    /**
     * The next fencing token of lock `name` for its holder `token`, higher than any a holder of it got before; 0 when
     * the lease had ended, or `unconfirmed` when the replicas did not confirm it in time (a later holder might then
     * get the same one after a failover).
     */
    async fenceLock(a: { name: string; token: string }): Promise<number | 'unconfirmed'> {
      const lock = k.lock(a.name);
      const fence = await fenceLockScript(redis, [lock.owner, lock.fence], [a.token]);
      if (fence === 0 || (await replicated(lock.fence))) return fence;
      return 'unconfirmed';
    },

    /**
     * Gives the holder `token` of lock `name` `leaseMs` from now: `extended`, `ended` when its lease had ended, or
     * `unconfirmed` when the replicas did not confirm it in time (the lease is sure only until its previous end).
     */
    async extendLock(a: {
      name: string;
      token: string;
      leaseMs: number;
    }): Promise<'extended' | 'ended' | 'unconfirmed'> {
      const owner = k.lockOwner(a.name);
      if ((await extendLockScript(redis, [owner], [a.token, a.leaseMs])) === 0) return 'ended';
      return (await replicated(owner)) ? 'extended' : 'unconfirmed';
    },

    /**
     * Passes lock `name` from `token` to `waiterToken` with a new lease: `handed`, `ended` when the holder's lease
     * had ended (nothing written), or `unconfirmed` when the replicas did not confirm it in time (it was given back).
     */
    async handOffLock(a: {
      name: string;
      token: string;
      waiterToken: string;
      leaseMs: number;
    }): Promise<'handed' | 'ended' | 'unconfirmed'> {
      const owner = k.lockOwner(a.name);
      if ((await handOffLockScript(redis, [owner], [a.token, a.waiterToken, a.leaseMs])) === 0) return 'ended';
      if (await replicated(owner)) return 'handed';
      await releaseLockScript(redis, [owner], [a.waiterToken]);
      return 'unconfirmed';
    },

    /**
     * Frees lock `name` held with `token`: 1, or 2 when someone waited for it (its doorbell rang); 0 when the lease
     * had ended (releaseLock.lua's reply as it is: this is every holder's last step).
     */
    releaseLock(a: { name: string; token: string }): Promise<0 | 1 | 2> {
      return releaseLockScript(redis, [k.lockOwner(a.name)], [a.token]);
    },

    /** What waiters of read-write lock `name` watch: its writer key, and the doorbell its releases ring. */
    rwLockHead(a: { name: string }): Head {
      const lock = k.rwlock(a.name);
      return { key: lock.writer, channel: lock.bell };
    },

    /**
     * Takes read-write lock `name` in `mode` with `token` for `leaseMs`: its fencing token, the ms until what refused
     * it ends, or `unconfirmed` when the replicas did not confirm the take in time (it was given back). Refused, a
     * caller that waits (`waitMs` > 0) is registered for that long, and a writer queues new readers behind it.
     */
    async acquireRwLock(a: {
      name: string;
      mode: 'read' | 'write';
      token: string;
      leaseMs: number;
      waitMs: number;
    }): Promise<{ fence: number } | { heldForMs: number } | 'unconfirmed'> {
      const lock = k.rwlock(a.name);
      const acquire = a.mode === 'read' ? acquireReadLockScript : acquireWriteLockScript;
      const [fence, heldForMs] = await acquire(
        redis,
        [lock.writer, lock.readers, lock.writers, lock.waited, lock.fence],
        [a.token, a.leaseMs, Math.ceil(a.waitMs)],
      );
      if (fence === 0) return { heldForMs: heldForMs! };
      const written = a.mode === 'read' ? lock.readers : lock.writer;
      if (await replicated(written)) return { fence };
      await releaseRwLockScript(redis, [lock.writer, lock.readers, lock.waited], [a.mode, a.token, lock.bell]);
      return 'unconfirmed';
    },

    /**
     * Gives the `mode` lease `token` of read-write lock `name` `leaseMs` from now: `extended`, `ended` when it had
     * ended, or `unconfirmed` when the replicas did not confirm it in time.
     */
    async extendRwLock(a: {
      name: string;
      mode: 'read' | 'write';
      token: string;
      leaseMs: number;
    }): Promise<'extended' | 'ended' | 'unconfirmed'> {
      const lock = k.rwlock(a.name);
      const reply = await extendRwLockScript(redis, [lock.writer, lock.readers], [a.mode, a.token, a.leaseMs]);
      if (reply === 0) return 'ended';
      return (await replicated(a.mode === 'read' ? lock.readers : lock.writer)) ? 'extended' : 'unconfirmed';
    },

    /** Ends the `mode` lease `token` of read-write lock `name`, ringing if it may let a waiter in; false: it had ended. */
    async releaseRwLock(a: { name: string; mode: 'read' | 'write'; token: string }): Promise<boolean> {
      const lock = k.rwlock(a.name);
      const reply = await releaseRwLockScript(
        redis,
        [lock.writer, lock.readers, lock.waited],
        [a.mode, a.token, lock.bell],
      );
      return reply === 1;
    },

    /** What waiters of reentrant lock `name` watch: its key, and the doorbell its releases ring. */
    reentrantHead(a: { name: string }): Head {
      const lock = k.reentrantLock(a.name);
      return { key: lock, channel: lock };
    },

    /**
     * Takes reentrant lock `name` for `owner` (a new lease with `token`), or enters it once more when `owner` holds
     * it; refused, the holder and the ms left on its lease (a caller that `waits` is registered, so the release
     * rings; `others`: others of this process wait, so it is taken registered), or `unconfirmed` when the replicas
     * did not confirm a new holder in time (it was given back). A `first` try with no `others` is one SET NX PX (a
     * free lock is taken at depth 1 with fencing token 0, drawn on demand by fenceReentrant); a lock it finds held,
     * and every other try, go through acquireReentrant.lua.
     */
    acquireReentrant(a: ReentrantTry): Promise<Entered> {
      // Not async (as acquireLock): the uncontended take is every holder's first step.
      const lock = k.reentrantLock(a.name);
      if (!a.first || a.others) return enterReentrant(lock, a);
      return redis
        .set(lock, reentrantValue(a.owner, a.token, 1, '0'), 'PX', a.leaseMs, 'NX')
        .then((ok): Entered | Promise<Entered> =>
          ok === 'OK'
            ? keepEntry(lock, { owner: a.owner, token: a.token, depth: 1, leftMs: a.leaseMs })
            : enterReentrant(lock, a),
        );
    },

    /**
     * The fencing token of the holder `token` of reentrant lock `name`: drawn the first time it asks, the same for
     * as long as the same owner holds it (re-entries included), higher than any an earlier holder drew; 0 when the
     * lease had ended, or `unconfirmed` when the replicas did not confirm a new one in time.
     */
    async fenceReentrant(a: { name: string; token: string }): Promise<number | 'unconfirmed'> {
      const lock = k.reentrant(a.name);
      const fence = await fenceReentrantScript(redis, [lock.lock, lock.fences], [a.token]);
      if (fence === 0 || (await replicated(lock.fences))) return fence;
      return 'unconfirmed';
    },

    /** Whether `token` holds reentrant lock `name` (one GET: a lease that ended reads as not held). */
    async holdsReentrant(a: { name: string; token: string }): Promise<boolean> {
      return reentrantState(await redis.get(k.reentrantLock(a.name)), 0)?.token === a.token;
    },

    /**
     * Leaves reentrant lock `name` held with `token` once: the depth left (0: free, its doorbell rung if someone
     * waits), -1 when its lease had ended. With `last` (the holder as the caller knows it at depth 1), it is first
     * freed by its whole value through releaseLock.lua, lighter than releaseReentrant.lua; only when the value
     * differs (another process entered it or drew its fence, or the lease ended) does releaseReentrant.lua follow.
     */
    releaseReentrant(a: {
      name: string;
      token: string;
      last?: { owner: string; fence: string } | undefined;
    }): Promise<number> {
      const lock = k.reentrantLock(a.name);
      if (!a.last) return releaseReentrantScript(redis, [lock], [a.token]);
      const value = reentrantValue(a.last.owner, a.token, 1, a.last.fence);
      // Not async: one promise fewer than an async function's on the usual path.
      return releaseLockScript(redis, [lock], [value]).then((freed) =>
        freed !== 0 ? 0 : releaseReentrantScript(redis, [lock], [a.token]),
      );
    },

    /** Gives the lease `token` holds on reentrant lock `name` `leaseMs` from now (as extendLock). */
    async extendReentrant(a: {
      name: string;
      token: string;
      leaseMs: number;
    }): Promise<'extended' | 'ended' | 'unconfirmed'> {
      const lock = k.reentrantLock(a.name);
      if ((await extendReentrantScript(redis, [lock], [a.token, a.leaseMs])) === 0) return 'ended';
      return (await replicated(lock)) ? 'extended' : 'unconfirmed';
    },

    /** A place for `holder` in semaphore `name` of `limit` (dropped after `timeoutMs` unrefreshed); false: full. */
    async acquireSemaphore(a: { name: string; limit: number; timeoutMs: number; holder: string }): Promise<boolean> {
      return (await acquireSemaphoreScript(redis, [k.semaphore(a.name)], [a.limit, a.timeoutMs, a.holder])) === 1;
    },

    /** Gives `holder` of semaphore `name` `timeoutMs` from now; false when it had been dropped. */
    async refreshSemaphore(a: { name: string; timeoutMs: number; holder: string }): Promise<boolean> {
      return (await refreshSemaphoreScript(redis, [k.semaphore(a.name)], [a.timeoutMs, a.holder])) === 1;
    },

    /** Gives `holder`'s place in semaphore `name` back; false when it had been dropped. */
    async releaseSemaphore(a: { name: string; holder: string }): Promise<boolean> {
      return (await redis.zrem(k.semaphore(a.name), a.holder)) === 1;
    },

    /** The doorbell rung whenever a task of `queue` is delayed, and the due time (ms, Redis's clock) a ring names. */
    queueBell(a: { queue: string }): { channel: string; dueAtMs: (ring: string) => number } {
      // A ring is "<delayed key> <due at>" (lib/queue.lua delayTask).
      return { channel: k.queue(a.queue).bell, dueAtMs: (ring) => Number(ring.slice(ring.lastIndexOf(' ') + 1)) };
    },

    /** Adds `task` (its JSON) to `queue`, ready now or after `delayMs` (then the queue's doorbell rings). */
    async enqueueTask(a: { queue: string; task: string; delayMs: number }): Promise<void> {
      const q = k.queue(a.queue);
      await enqueueTaskScript(redis, [q.ready, q.delayed], [a.task, a.delayMs, q.bell]);
    },

    /**
     * Moves up to `max` due tasks of `queue` to its ready list: how many, ms until the next is due (-1: none), and
     * Redis's clock (ms) as it ran.
     */
    async promoteTasks(a: {
      queue: string;
      max: number;
    }): Promise<{ moved: number; nextDueMs: number; nowMs: number }> {
      const q = k.queue(a.queue);
      const [moved, nextDueMs, nowMs] = await promoteTasksScript(redis, [q.ready, q.delayed], [a.max]);
      return { moved, nextDueMs, nowMs };
    },

    /** Moves up to `max` ready tasks of `queue` to the active list of `workerId`, without waiting; their JSON. */
    takeTasks(a: { queue: string; workerId: string; max: number }): Promise<string[]> {
      const q = k.queue(a.queue);
      return takeTasksScript(redis, [q.ready, q.active(a.workerId)], [a.max]);
    },

    /** A connection of its own, named `name`, for a consumer that waits for tasks. */
    blockingTakes(a: { name: string }): BlockingTakes {
      const blocking = createBlockingClient(redis, log, a.name);
      return {
        takeTask: ({ queue, workerId, timeoutSeconds }) => {
          const q = k.queue(queue);
          return blocking.blmove(q.ready, q.active(workerId), 'LEFT', 'LEFT', timeoutSeconds);
        },
        interrupt: () => blocking.disconnect(),
        close: () => closeRedisClient(blocking),
      };
    },

    /**
     * Removes `task` (its JSON) from `workerId`'s active list (`done` false: it was no longer there) and moves up to
     * `take` ready tasks there in its place, in the same call (`taken`: their JSON, first to run first).
     */
    async ackTask(a: { queue: string; workerId: string; task: string; take: number }): Promise<SettledTask> {
      const q = k.queue(a.queue);
      return settled(await ackTaskScript(redis, [q.active(a.workerId), q.ready], [a.task, a.take]));
    },

    /**
     * Takes `taken` off the active list of `workerId` and puts `returned` back after `delayMs` (ringing the queue's
     * doorbell), or (delayMs -1) files it as failed with `error` (`done` false: the task was no longer on the list,
     * so neither), and moves up to `take` ready tasks to the list in its place, as ackTask does.
     */
    async retryTask(a: {
      queue: string;
      workerId: string;
      taken: string;
      returned: string;
      delayMs: number;
      error: string;
      failedKept: number;
      take: number;
    }): Promise<SettledTask> {
      const q = k.queue(a.queue);
      const reply = await retryTaskScript(
        redis,
        [q.active(a.workerId), q.delayed, q.failed, q.ready],
        [a.taken, a.returned, a.delayMs, a.error, a.failedKept, q.bell, a.take],
      );
      return settled(reply);
    },

    /** Records `workerId` of `queue` as alive; the workers quiet for longer than `timeoutMs`. */
    heartbeat(a: { queue: string; workerId: string; timeoutMs: number }): Promise<string[]> {
      return heartbeatScript(redis, [k.queue(a.queue).workers], [a.workerId, a.timeoutMs]);
    },

    /**
     * Returns the tasks of `workerId` to `queue` and forgets the worker: how many went back, or 'alive' when the
     * worker has heartbeated within `timeoutMs` since (-1: it is stopping itself, so its tasks count no attempt).
     */
    async requeueTasks(a: {
      queue: string;
      workerId: string;
      timeoutMs: number;
      failedKept: number;
    }): Promise<number | 'alive'> {
      const q = k.queue(a.queue);
      const returned = await requeueTasksScript(
        redis,
        [q.active(a.workerId), q.ready, q.workers, q.failed],
        [a.workerId, a.timeoutMs, a.failedKept],
      );
      return returned === STATUS.ALIVE ? 'alive' : returned;
    },

    /** How many tasks `queue` has ready, delayed, failed and running (on every worker's active list). */
    async queueSizes(a: {
      queue: string;
    }): Promise<{ ready: number; delayed: number; failed: number; running: number }> {
      const q = k.queue(a.queue);
      const workers = await redis.zrange(q.workers, '0', '-1');
      const [ready, delayed, failed, ...running] = await Promise.all([
        redis.llen(q.ready),
        redis.zcard(q.delayed),
        redis.llen(q.failed),
        ...workers.map((w) => redis.llen(q.active(w))),
      ]);
      return { ready, delayed, failed, running: running.reduce((sum, n) => sum + n, 0) };
    },

    /** Moves the failed task `id` of `queue` back to its ready list, its attempts counted from 0; false: none has it. */
    async retryFailedTask(a: { queue: string; id: string }): Promise<boolean> {
      const q = k.queue(a.queue);
      return (await retryFailedTaskScript(redis, [q.failed, q.ready], [a.id])) === 1;
    },

    /** The newest `count` failed tasks of `queue` ({error, failedAt, task} JSON each). */
    failedTasks(a: { queue: string; count: number }): Promise<string[]> {
      return redis.lrange(k.queue(a.queue).failed, 0, a.count - 1);
    },
  };
}
