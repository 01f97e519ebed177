/**
 * Keys of the shared cache and its Bloom filters. A cache entry's value, lock and doorbell share the entry's tag
 * (`cache:{<cache>:<key>}`), so entries spread over a cluster's slots and each one's steps are one script; a Bloom
 * filter lives whole in one slot (`bloom:{<name>}`), its sub-filters side by side in one bitmap.
 */
import type { Keyspace } from '../keys.js';

export type CacheKeys = ReturnType<typeof cacheKeys>;

export function cacheKeys({ key }: Keyspace) {
  return {
    /** The keys of entry `entry` of cache `cache`, all on the entry's slot. */
    cacheEntry: (cache: string, entry: string) => {
      const tag = `${cache}:${entry}`;
      return {
        /** string with a TTL: 'v' + the value's JSON, '-' (absent: a negative entry) or '~' (invalidated just now) */
        value: key('cache', tag),
        /** string with a lease (PX): the token of the process computing the value */
        lock: key('cache', tag, 'lock'),
        /** sharded pub/sub channel, rung with "<lock key> <what happened>" when the lock is let go */
        bell: key('cache', tag, 'bell'),
      };
    },
    /** sharded pub/sub channel of cache `cache`: rung with an entry's key when it is invalidated (in-process copies) */
    cacheMemoryBell: (cache: string) => key('cache', cache, 'memory'),
    /** The keys of Bloom filter `name`, all on its slot. */
    bloomFilter: (name: string) => ({
      /** hash: ready (0/1), filters (count), and per sub-filter i: m<i> bits, k<i> hashes, o<i> offset, c<i> capacity, n<i> items, p<i> error rate */
      meta: key('bloom', name, 'meta'),
      /** string (bitmap): every sub-filter's bits, sub-filter i at offset o<i> */
      bits: key('bloom', name, 'bits'),
      /** string with a lease (PX): the token of the process filling the filter from what existed before it */
      filling: key('bloom', name, 'filling'),
    }),
  };
}
