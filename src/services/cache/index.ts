/**
 * The cache domain: the shared cache component the other domains build their caches on (`caches.cache`) and its
 * Bloom filters (`caches.filter`), over src/redis/cache/. Services without GraphQL; their figures go to /metrics.
 */
import { cacheCommands } from '../../redis/cache/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain } from '../shared/domain.js';
import { BloomFilter, type BloomOptions } from './bloom.js';
import { Cache, type CacheOptions } from './cache.js';
import { CacheFigures, type Figure } from './figures.js';

export type { BloomFilter } from './bloom.js';
export type { Cache } from './cache.js';

export interface CacheService {
  /** A cache named `options.name` (one per name in a process). */
  cache<T>(options: CacheOptions): Cache<T>;
  /** The Bloom filter named `options.name` (one per name in a process). */
  filter(options: BloomOptions): BloomFilter;
  /** The cache and the Bloom filter of that name made in this process, if any (tests and benchmarks). */
  named(name: string): { cache: Cache<unknown> | undefined; filter: BloomFilter | undefined };
  /** What cache `name` counted in this process (tests). */
  figures(name: string): Record<Figure, number>;
}

export function createCache(
  { redis, space, config, log }: Base,
  { poller }: { poller: MailboxPoller },
): Domain<{
  caches: CacheService;
}> {
  const commands = cacheCommands(redis, space);
  const figures = new CacheFigures();
  const caches = new Map<string, Cache<unknown>>();
  const filters = new Map<string, BloomFilter>();
  const settings = config.cache;
  const once = <V>(made: Map<string, V>, name: string, make: () => V): V => {
    if (made.has(name)) throw new Error(`a cache or Bloom filter named "${name}" was made twice`);
    const value = make();
    made.set(name, value);
    return value;
  };
  return {
    services: {
      caches: {
        cache: <T>(options: CacheOptions) =>
          once(
            caches,
            options.name,
            () => new Cache<unknown>({ commands, poller, settings, figures, log }, options),
          ) as Cache<T>,
        filter: (options) =>
          once(filters, options.name, () => new BloomFilter({ commands, defaults: settings.bloom, log }, options)),
        named: (name) => ({ cache: caches.get(name), filter: filters.get(name) }),
        figures: (name) => figures.of(name),
      },
    },
    metrics: figures.metrics(),
    async close() {
      for (const cache of caches.values()) cache.close();
      await Promise.all([...filters.values()].map((f) => f.close()));
    },
  };
}
