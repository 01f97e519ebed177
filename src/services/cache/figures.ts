/**
 * What every cache of the process counts, for `GET /metrics` (labelled by the cache's name, never by a key) and for
 * tests: the figures of this process since it started; Prometheus adds the processes up.
 */
import type { DomainMetric } from '../shared/domain.js';

export const FIGURES = [
  'hits',
  'memoryHits',
  'misses',
  'computations',
  'processWaits',
  'deploymentWaits',
  'negativeHits',
  'refusals',
] as const;

export type Figure = (typeof FIGURES)[number];

export class CacheFigures {
  private readonly byCache = new Map<string, Record<Figure, number>>();

  count(cache: string, figure: Figure, n = 1): void {
    let figures = this.byCache.get(cache);
    if (!figures) {
      figures = Object.fromEntries(FIGURES.map((f) => [f, 0])) as Record<Figure, number>;
      this.byCache.set(cache, figures);
    }
    figures[figure] += n;
  }

  /** The counts of cache `cache` (zeros when it counted nothing yet). */
  of(cache: string): Record<Figure, number> {
    return {
      ...(this.byCache.get(cache) ?? (Object.fromEntries(FIGURES.map((f) => [f, 0])) as Record<Figure, number>)),
    };
  }

  /** The figures as Prometheus counters. */
  metrics(): DomainMetric[] {
    const each = (pick: (f: Record<Figure, number>) => [Record<string, string>, number][]) => () =>
      [...this.byCache].flatMap(([cache, f]) =>
        pick(f).map(([labels, value]) => ({ labels: { cache, ...labels }, value })),
      );
    return [
      {
        name: 'cache_hits_total',
        help: 'Lookups answered by a stored value, by layer (memory: this process; redis: the shared entry).',
        type: 'counter',
        collect: each((f) => [
          [{ layer: 'memory' }, f.memoryHits],
          [{ layer: 'redis' }, f.hits],
        ]),
      },
      {
        name: 'cache_misses_total',
        help: 'Lookups that found nothing stored (then computed, or waited for another computation).',
        type: 'counter',
        collect: each((f) => [[{}, f.misses]]),
      },
      {
        name: 'cache_computations_total',
        help: 'Values computed by this process (for a miss it held the lock of).',
        type: 'counter',
        collect: each((f) => [[{}, f.computations]]),
      },
      {
        name: 'cache_waits_total',
        help: "Lookups that waited for another's computation (single flight): in this process, or in another one.",
        type: 'counter',
        collect: each((f) => [
          [{ scope: 'process' }, f.processWaits],
          [{ scope: 'deployment' }, f.deploymentWaits],
        ]),
      },
      {
        name: 'cache_negative_hits_total',
        help: 'Lookups answered absent by a negative entry.',
        type: 'counter',
        collect: each((f) => [[{}, f.negativeHits]]),
      },
      {
        name: 'cache_bloom_refusals_total',
        help: 'Lookups answered absent by the Bloom filter, without a read of the entry or a computation.',
        type: 'counter',
        collect: each((f) => [[{}, f.refusals]]),
      },
    ];
  }
}
