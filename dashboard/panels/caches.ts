/**
 * The caches and rate limits of the answering process (`gatewayFigures`: the figures /metrics prints), since it
 * started: each cache's hits (memory, Redis), misses, computations, waits, negative hits and Bloom refusals, with its
 * hit ratio; the rate limits' BUSY refusals by limit (every limit the server lists).
 */
import { gql } from '../api.js';
import { h, num, table } from '../dom.js';
import type { CacheCounts, Count } from '../../src/services/ops/figures.js';
import type { PanelSpec } from '../panel.js';

export function cachesPanel(): PanelSpec {
  return {
    id: 'caches',
    title: 'Cache and rate limits (this process)',
    everyMs: 5000,
    empty: () => 'No cache was used yet: read a document or a user, then look again.',
    async load(body) {
      const { gatewayFigures: f } = await gql<{
        gatewayFigures: {
          hostname: string;
          pid: number;
          caches: CacheCounts[];
          rateLimitRefusals: Count[];
        };
      }>(
        `query DashboardCaches { gatewayFigures { hostname pid
          caches { name memoryHits redisHits misses computations processWaits deploymentWaits negativeHits bloomRefusals }
          rateLimitRefusals { name count } } }`,
      );
      // Every limit, 0 until it refuses (the server lists them).
      const limits = f.rateLimitRefusals;
      body.append(
        h('h3', {}, 'Rate limits: BUSY refusals'),
        table(
          limits.map((l) => l.name),
          [limits.map((l) => num(l.count))],
          { className: 'limits' },
        ),
      );
      if (f.caches.length === 0) return false;
      body.append(
        h('h3', {}, 'Caches'),
        table(
          [
            'cache',
            'hits (memory)',
            'hits (Redis)',
            'misses',
            'hit ratio',
            'computations',
            'waits (process)',
            'waits (deployment)',
            'negative hits',
            'Bloom refusals',
          ],
          f.caches.map((c) => {
            const answered = c.memoryHits + c.redisHits + c.negativeHits + c.bloomRefusals;
            const lookups = answered + c.misses;
            return [
              c.name,
              num(c.memoryHits),
              num(c.redisHits),
              num(c.misses),
              lookups === 0 ? '–' : `${num((100 * answered) / lookups, 1)} %`,
              num(c.computations),
              num(c.processWaits),
              num(c.deploymentWaits),
              num(c.negativeHits),
              num(c.bloomRefusals),
            ];
          }),
          { className: 'caches' },
        ),
        h('p', { className: 'note' }, `Process ${f.hostname} pid ${f.pid}, since it started.`),
      );
      return true;
    },
  };
}
