/**
 * How clients read counters and statistics (dashboards, many at once): through the shared cache (docs/cache.md,
 * "Where it is used"). The gateway writes them only every METRICS_FLUSH_MS, so a read of Redis is already up to that
 * old; the cache adds at most one more flush interval, and in exchange each process reads a counter or statistic at
 * most about twice an interval (its in-memory copy, single flight) and the deployment computes it from Redis about
 * as often (the shared entry, single flight across processes).
 */

/** Values each process keeps per cache: the hot names of dashboards; past it, the least recently used go. */
export const SHARED_READS_KEPT = 1000;

/**
 * The cache options that keep a read at most `flushMs` older than Redis: a shared entry lives at most half of it
 * (its TTL with the largest jitter `ttlJitter`), and a process's copy of it at most the other half.
 */
export function sharedReads({ flushMs, ttlJitter }: { flushMs: number; ttlJitter: number }) {
  const half = flushMs / 2;
  return {
    ttlMs: Math.max(1, Math.floor(half / (1 + ttlJitter))),
    memory: { entries: SHARED_READS_KEPT, ttlMs: Math.max(1, Math.floor(half)) },
  };
}
