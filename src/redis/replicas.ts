/**
 * Writes whose loss would break a promise (a sent message, a read position, a scheduled message, a session) wait for
 * replicas before they are acknowledged: WAIT on the connection the write went over, which covers every write made
 * on it before (REDIS_WAIT_REPLICAS, REDIS_WAIT_TIMEOUT_MS). Asynchronous replication otherwise loses what a dying
 * master acknowledged and had not copied yet. A WAIT that returns fewer copies than asked is reported (a warn line,
 * and the count `short`), not turned into an error: the write happened, and a client told otherwise would retry it.
 * Locks are the exception (src/redis/coordination/commands.ts): a lease no replica confirmed is given back.
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisClient } from './clients.js';

export interface ReplicaWait {
  /**
   * Resolves once `replicas` replicas have every write made so far on the connection that wrote `key`, or the
   * timeout passed: whether they confirmed it in time (always true with `replicas` 0).
   */
  (key: string): Promise<boolean>;
  /** WAITs that timed out with fewer copies than asked, since the process started. */
  readonly short: number;
}

export function replicaWait(
  redis: RedisClient,
  { replicas, timeoutMs }: { replicas: number; timeoutMs: number },
  log: Logger,
): ReplicaWait {
  let short = 0;
  const wait = async (key: string): Promise<boolean> => {
    if (replicas === 0) return true;
    const copies = Number(await connectionOf(redis, key).call('WAIT', replicas, timeoutMs));
    if (copies >= replicas) return true;
    short++;
    log.warn({ key, copies, replicas, timeoutMs }, 'fewer replicas than asked confirmed a write in time (WAIT)');
    return false;
  };
  return Object.defineProperty(wait, 'short', { get: () => short }) as ReplicaWait;
}

/** The connection a command on `key` goes over: on a cluster, the one to the master of its slot. */
function connectionOf(redis: RedisClient, key: string) {
  if (!(redis instanceof Cluster)) return redis;
  const owner = redis.slots[calculateSlot(key)]?.[0];
  const node = redis.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
  if (!node) throw new Error(`no master known for the slot of ${key}`);
  return node;
}
