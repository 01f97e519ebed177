/** Keys of locks (plain and RedLock), semaphores and task queues. */
import type { Keyspace } from '../keys.js';

export type CoordinationKeys = ReturnType<typeof coordinationKeys>;

export function coordinationKeys({ key }: Keyspace) {
  /**
   * string with a lease (PX): the holder's random token, + once someone waits (lib/lock.lua). Also the name of the
   * lock's doorbell, a sharded pub/sub channel (channels are not keys: same name, same slot), rung with
   * "<owner key> free:<token>" when a holder someone waits for releases. Alone, for the steps that need no other key.
   */
  const lockOwner = (name: string) => key('lock', name);
  /**
   * string with a lease (PX): "<owner> <token> <depth> <fence>", + once someone waits (lib/reentrant.lua); fence 0
   * until the holder asks for one. Also the name of its doorbell (as lockOwner's), rung with "<lock key>
   * free:<token>" (or, freed by its value through releaseLock, "<lock key> free:<owner>_<token>_1_<fence>") when a
   * lock someone waits for is freed.
   */
  const reentrantLock = (name: string) => key('rlock', name);
  return {
    lockOwner,
    /** the keys of one lock, all on the lock's slot */
    lock: (name: string) => {
      const owner = lockOwner(name);
      return {
        owner,
        /** string counter, never expires: the fencing token handed to each holder in turn */
        fence: key('lock', name, 'fence'),
        /** sharded pub/sub channel: the owner key's name (lockOwner) */
        bell: owner,
      };
    },
    /** the keys of one read-write lock, all on the lock's slot (lib/rwlock.lua) */
    rwlock: (name: string) => ({
      /** string with a lease (PX): the writer's random token */
      writer: key('rwlock', name),
      /** sorted set: reader token → end of its lease (ms, Redis's clock); expires with the last */
      readers: key('rwlock', name, 'readers'),
      /** sorted set: waiting writer token → end of its wait (ms, Redis's clock); new readers queue behind them */
      writers: key('rwlock', name, 'writers'),
      /** string with the longest wait registered (PX): releases ring while it exists */
      waited: key('rwlock', name, 'waited'),
      /** string counter, never expires: the fencing token handed to each holder in turn */
      fence: key('rwlock', name, 'fence'),
      /** sharded pub/sub channel, rung with "<writer key> free:<token>" when a release may let a waiter in */
      bell: key('rwlock', name, 'bell'),
    }),
    /**
     * string with a lease (PX): the holder's random token, on each of RedLock's independent servers (REDLOCK_NODES),
     * apart from the plain lock of the same name
     */
    redlock: (name: string) => key('redlock', name),
    /** the keys of one reentrant lock, all on the lock's slot */
    reentrant: (name: string) => {
      const lock = reentrantLock(name);
      return {
        lock,
        /** string counter, never expires: the fencing token handed to each holder that asks, in turn */
        fences: key('rlock', name, 'fence'),
        /** sharded pub/sub channel: the lock key's name (reentrantLock) */
        bell: lock,
      };
    },
    reentrantLock,
    /** sorted set: holder id → expiry (ms, Redis's clock); the counting semaphore `name` */
    semaphore: (name: string) => key('sem', name, 'holders'),
    /** the keys of one task queue, all on the queue's slot */
    queue: (name: string) => ({
      /** list: task JSON, next to run at the head; ordered by priority, FIFO within one */
      ready: key('queue', name, 'ready'),
      /** sorted set: task JSON → when it is due (ms, Redis's clock) */
      delayed: key('queue', name, 'delayed'),
      /** sharded pub/sub channel, rung with "<delayed key> <due at (ms)>" whenever a task is delayed */
      bell: key('queue', name, 'bell'),
      /** list: {error, failedAt, task} JSON of tasks out of attempts, newest first, capped */
      failed: key('queue', name, 'failed'),
      /** sorted set: worker id → last heartbeat (ms, Redis's clock) */
      workers: key('queue', name, 'workers'),
      /** list: the tasks one worker has taken and not yet acknowledged */
      active: (workerId: string) => key('queue', name, 'active', workerId),
    }),
  };
}
