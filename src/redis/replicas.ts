/**
 * Writes whose loss would break a promise (a sent message, a read position, a scheduled message, a session, a lock)
 * wait for replicas before they are acknowledged (REDIS_WAIT_REPLICAS, REDIS_WAIT_TIMEOUT_MS). Asynchronous
 * replication otherwise loses what a dying master acknowledged and had not copied yet.
 *
 * WAIT blocks the connection it is sent on, and confirms only the writes made on that connection. So the waits do not
 * go over the shared connection (every other command of the process would queue behind a slow replica): a connection
 * of their own writes a mark on the master of the write's slot and WAITs for it. A master copies its writes in order,
 * so replicas that have the mark have the write before it. Waits that come while one is under way share the next: one
 * mark and one WAIT per master at a time, however many writes wait.
 *
 * A WAIT that returns fewer copies than asked is reported (a warn line, and the count `short`), and its writes are
 * acknowledged anyway: they happened, and a client told otherwise would retry them. Locks are the exception
 * (src/redis/coordination/commands.ts): a lease no replica confirmed is given back.
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { closeRedisClient, createWaitsClient, type RedisClient } from './clients.js';
import type { Keyspace } from './keys.js';

export interface ReplicaWait {
  /**
   * Resolves once `replicas` replicas have every write made so far on the master of `key`'s slot, or the timeout
   * passed: whether they confirmed it in time (always true with `replicas` 0).
   */
  (key: string): Promise<boolean>;
  /** How many replicas a write waits for (REDIS_WAIT_REPLICAS). */
  readonly replicas: number;
  /** WAITs that timed out with fewer copies than asked, since the process started. */
  readonly short: number;
  /** Closes the connection of the waits. */
  close(): Promise<void>;
}

/** The warn line of a WAIT that returned fewer copies than asked (what bench:failover counts). */
export const WAIT_SHORT_LINE = 'fewer replicas than asked confirmed a write in time (WAIT)';

/** How long the first wait waits for the waits' connection (later, one that is down fails at once). */
const CONNECT_MS = 10_000;

/** A mark lives this long after its last write: one key per master (per slot on a cluster) that waits were made on. */
const MARK_MS = 60_000;

export function replicaWait(
  redis: RedisClient,
  { replicas, timeoutMs }: { replicas: number; timeoutMs: number },
  space: Keyspace,
  log: Logger,
): ReplicaWait {
  if (replicas === 0) return waitFor({ wait: () => Promise.resolve(true), replicas, short: () => 0 });
  let short = 0;
  const waits = createWaitsClient(redis, log);
  let ready = false;
  const connected = new Promise<void>((resolve) =>
    waits.once('ready', () => {
      ready = true;
      resolve();
    }),
  );
  /** Per mark (per master): the last round asked for, and the one not started yet that new waits join. */
  const rounds = new Map<string, { last: Promise<number>; queued: Promise<number> | undefined }>();

  /** Writes the mark on the waits' own connection and WAITs for it: how many replicas have it. */
  const round = async (mark: string): Promise<number> => {
    if (!ready) await Promise.race([connected, rejectAfter(CONNECT_MS, 'the connection of replica waits is not up')]);
    await waits.set(mark, Date.now(), 'PX', MARK_MS); // on a cluster, over the connection to the slot's master
    return Number(await connectionOf(waits, mark).call('WAIT', replicas, timeoutMs));
  };

  /** A round that starts after every write made so far: the one not started yet, or a new one after the last. */
  const confirm = (mark: string): Promise<number> => {
    const state = rounds.get(mark) ?? { last: Promise.resolve(0), queued: undefined };
    if (state.queued) return state.queued;
    const queued: Promise<number> = state.last
      .catch(() => 0)
      .then(() => {
        state.queued = undefined; // started: later waits make the next round
        return round(mark);
      });
    state.queued = state.last = queued;
    rounds.set(mark, state);
    void queued.catch(() => 0).then(() => state.last === queued && rounds.delete(mark));
    return queued;
  };

  const wait = async (key: string): Promise<boolean> => {
    const copies = await confirm(space.key('replicas', markTag(redis, key), 'mark'));
    if (copies >= replicas) return true;
    short++;
    log.warn({ key, copies, replicas, timeoutMs }, WAIT_SHORT_LINE);
    return false;
  };
  return waitFor({ wait, replicas, short: () => short, close: () => closeRedisClient(waits) });
}

function waitFor(a: {
  wait: (key: string) => Promise<boolean>;
  replicas: number;
  short: () => number;
  close?: () => Promise<void>;
}): ReplicaWait {
  return Object.defineProperties(a.wait, {
    replicas: { value: a.replicas },
    short: { get: a.short },
    close: { value: a.close ?? (() => Promise.resolve()) },
  }) as ReplicaWait;
}

function rejectAfter(ms: number, why: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(why)), ms).unref());
}

/** The tag of the mark for `key`: one on standalone Redis, one on the slot of `key` on a cluster. */
function markTag(redis: RedisClient, key: string): string {
  return redis instanceof Cluster ? tagOfSlot(calculateSlot(key)) : 'mark';
}

let slotTags: string[] | undefined;

/** A short tag whose slot is `slot` (the table is made once: about 160,000 hashes). */
function tagOfSlot(slot: number): string {
  if (!slotTags) {
    const table: string[] = new Array<string>(16384);
    let found = 0;
    for (let i = 0; found < 16384; i++) {
      const tag = i.toString(36);
      const s = calculateSlot(tag);
      if (table[s] === undefined) {
        table[s] = tag;
        found++;
      }
    }
    slotTags = table;
  }
  return slotTags[slot]!;
}

/** The connection of `client` to the master of `key`'s slot (the client itself when it is not a cluster). */
function connectionOf(client: RedisClient, key: string) {
  if (!(client instanceof Cluster)) return client;
  const owner = client.slots[calculateSlot(key)]?.[0];
  const node = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
  if (!node) throw new Error(`no master known for the slot of ${key}`);
  return node;
}
