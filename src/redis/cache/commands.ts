/**
 * The cache domain's door to Redis: cache entries (read, claim, fill, invalidate; absences without a lock) and
 * Bloom filters (reserve, add, exists, the fill from what existed before). Every step of an entry runs on the
 * entry's slot, every step of a filter on the filter's. The services of src/services/cache/ reach Redis only
 * through cacheCommands().
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import type { Head } from '../mailbox/commands.js';
import { script } from '../scripts.js';
import { cacheKeys } from './keys.js';

const cacheClaimScript = script<[1, string] | [2] | [0, number]>('cacheClaim');
const cacheFillScript = script<0 | 1>('cacheFill');
const cacheInvalidateScript = script<0 | 1>('cacheInvalidate');
const cacheExtendScript = script<0 | 1>('cacheExtend');
const bloomReserveScript = script<0 | 1>('bloomReserve');
const bloomAddScript = script<(0 | 1)[]>('bloomAdd');
const bloomExistsScript = script<[0] | [1, ...(0 | 1)[]]>('bloomExists');
const bloomClaimFillScript = script<[1] | [2] | [0, number]>('bloomClaimFill');
const bloomReadyScript = script<0 | 1>('bloomReady');

export type CacheCommands = ReturnType<typeof cacheCommands>;

/** An entry of a cache: the cache's name and the caller's key. */
export interface Entry {
  cache: string;
  key: string;
}

/** What a claim found: the stored entry, the lock (the caller computes), or the holder's lease left. */
export type Claim = { stored: string } | 'claimed' | { heldForMs: number };

/** One sub-filter of a Bloom filter, as stored. */
export interface SubFilter {
  capacity: number;
  items: number;
  bits: number;
  hashes: number;
  errorRate: number;
}

export function cacheCommands(redis: RedisClient, space: Keyspace) {
  const k = cacheKeys(space);
  const entry = (e: Entry) => k.cacheEntry(e.cache, e.key);
  return {
    /** What waiters of an entry's computation watch: its lock, and the doorbell its fill or invalidation rings. */
    entryHead(a: Entry): Head {
      const { lock, bell } = entry(a);
      return { key: lock, channel: bell };
    },

    /** The doorbell of cache `cache`'s in-process copies: it carries the key of each entry invalidated. */
    memoryBell(a: { cache: string }): { channel: string } {
      return { channel: k.cacheMemoryBell(a.cache) };
    },

    /** What each entry holds (null: nothing, or a tombstone), one round trip per node. */
    async readEntries(a: { cache: string; keys: readonly string[] }): Promise<(string | null)[]> {
      const stored = await Promise.all(a.keys.map((key) => redis.get(entry({ cache: a.cache, key }).value)));
      return stored.map((s) => (s === '~' ? null : s));
    },

    /** Reads the entry again and, still missing, takes its lock with `token` for `leaseMs`. */
    async claimEntry(a: Entry & { token: string; leaseMs: number }): Promise<Claim> {
      const { value, lock } = entry(a);
      const reply = await cacheClaimScript(redis, [value, lock], [a.token, a.leaseMs]);
      if (reply[0] === 1) return { stored: reply[1] };
      return reply[0] === 2 ? 'claimed' : { heldForMs: reply[1] };
    },

    /**
     * Stores `stored` for `ttlMs` (0: nothing, the lock is only let go) and lets the lock go, ringing its doorbell;
     * false when the lock was no longer `token`'s (nothing written).
     */
    async fillEntry(a: Entry & { token: string; stored: string; ttlMs: number }): Promise<boolean> {
      const { value, lock, bell } = entry(a);
      return (await cacheFillScript(redis, [value, lock], [a.token, a.stored, a.ttlMs, bell])) === 1;
    },

    /** Gives the lock of the entry `leaseMs` from now; false when it was no longer `token`'s. */
    async extendEntryLock(a: Entry & { token: string; leaseMs: number }): Promise<boolean> {
      return (await cacheExtendScript(redis, [entry(a).lock], [a.token, a.leaseMs])) === 1;
    },

    /** Stores `stored` for `ttlMs`, whatever the entry held (a writer that has the value). */
    async writeEntry(a: Entry & { stored: string; ttlMs: number }): Promise<void> {
      await redis.set(entry(a).value, a.stored, 'PX', a.ttlMs);
    },

    /** Stores each entry's `stored` for its `ttlMs`, whatever it held; issued together, one round trip per node. */
    async writeEntries(a: {
      cache: string;
      entries: readonly { key: string; stored: string; ttlMs: number }[];
    }): Promise<void> {
      await Promise.all(a.entries.map((e) => redis.set(k.cacheEntry(a.cache, e.key).value, e.stored, 'PX', e.ttlMs)));
    },

    /** Stores each absence for its `ttlMs` unless the entry holds something (a value, or a tombstone of a write). */
    async writeAbsences(a: { cache: string; keys: readonly string[]; ttlMs: readonly number[] }): Promise<void> {
      await Promise.all(
        a.keys.map((key, i) => redis.set(entry({ cache: a.cache, key }).value, '-', 'PX', a.ttlMs[i]!, 'NX')),
      );
    },

    /**
     * Invalidates each entry (a tombstone for `tombstoneMs`; a computation under way loses its lock) and rings the
     * cache's in-process copies' doorbell with each key.
     */
    async invalidateEntries(a: { cache: string; keys: readonly string[]; tombstoneMs: number }): Promise<void> {
      const bell = k.cacheMemoryBell(a.cache);
      await Promise.all(
        a.keys.map(async (key) => {
          const { value, lock, bell: entryBell } = entry({ cache: a.cache, key });
          await cacheInvalidateScript(redis, [value, lock], [a.tombstoneMs, entryBell]);
          await redis.spublish(bell, key);
        }),
      );
    },

    /** The ms left on each entry's TTL (-2: none), for tests and benchmarks. */
    entryTtls(a: { cache: string; keys: readonly string[] }): Promise<number[]> {
      return Promise.all(a.keys.map((key) => redis.pttl(entry({ cache: a.cache, key }).value)));
    },

    /** Creates Bloom filter `name`, ready, unless it exists; whether it did. */
    async reserveBloom(a: { name: string; capacity: number; errorRate: number }): Promise<boolean> {
      const { meta } = k.bloomFilter(a.name);
      return (await bloomReserveScript(redis, [meta], [a.capacity, a.errorRate])) === 1;
    },

    /** Adds `items` (reserving the filter, not ready, if it does not exist); per item, whether it was new. */
    async addToBloom(a: {
      name: string;
      items: readonly string[];
      capacity: number;
      errorRate: number;
    }): Promise<boolean[]> {
      if (a.items.length === 0) return [];
      const { meta, bits } = k.bloomFilter(a.name);
      const added = await bloomAddScript(redis, [meta, bits], [a.capacity, a.errorRate, ...a.items]);
      return added.map((n) => n === 1);
    },

    /** Per item, whether the filter may have it; null when the filter cannot say no (missing, or being filled). */
    async bloomHas(a: { name: string; items: readonly string[] }): Promise<boolean[] | null> {
      const { meta, bits } = k.bloomFilter(a.name);
      const [ready, ...flags] = await bloomExistsScript(redis, [meta, bits], a.items);
      return ready === 1 ? flags.map((n) => n === 1) : null;
    },

    /** Takes the lease to fill the filter from what existed before it: `ready`, `claimed`, or the holder's lease left. */
    async claimBloomFill(a: {
      name: string;
      token: string;
      leaseMs: number;
      capacity: number;
      errorRate: number;
    }): Promise<'ready' | 'claimed' | { heldForMs: number }> {
      const { meta, filling } = k.bloomFilter(a.name);
      const reply = await bloomClaimFillScript(redis, [meta, filling], [a.token, a.leaseMs, a.capacity, a.errorRate]);
      if (reply[0] === 1) return 'ready';
      return reply[0] === 2 ? 'claimed' : { heldForMs: reply[1] };
    },

    /** Gives the fill's lease `leaseMs` from now; false when it was no longer `token`'s. */
    async extendBloomFill(a: { name: string; token: string; leaseMs: number }): Promise<boolean> {
      return (await cacheExtendScript(redis, [k.bloomFilter(a.name).filling], [a.token, a.leaseMs])) === 1;
    },

    /** Marks the filter filled; false when the fill's lease was no longer `token`'s. */
    async markBloomReady(a: { name: string; token: string }): Promise<boolean> {
      const { meta, filling } = k.bloomFilter(a.name);
      return (await bloomReadyScript(redis, [meta, filling], [a.token])) === 1;
    },

    /** The filter's layout: whether it is ready, and its sub-filters (none: never reserved). */
    async bloomInfo(a: { name: string }): Promise<{ ready: boolean; filters: SubFilter[] }> {
      const h = await redis.hgetall(k.bloomFilter(a.name).meta);
      const count = Number(h.filters ?? 0);
      const filters = Array.from({ length: count }, (_, j) => {
        const i = j + 1;
        return {
          capacity: Number(h[`c${i}`]),
          items: Number(h[`n${i}`]),
          bits: Number(h[`m${i}`]),
          hashes: Number(h[`k${i}`]),
          errorRate: Number(h[`p${i}`]),
        };
      });
      return { ready: h.ready === '1', filters };
    },
  };
}
