/**
 * The telemetry domain: counters, statistics and logs (the book's chapter 5), and the gateway's own operations in
 * them; clients read counters and statistics through the shared cache (shared-reads.ts).
 */
import { telemetryCommands } from '../../redis/telemetry/commands.js';
import type { CacheService } from '../cache/index.js';
import type { Base, Domain } from '../shared/domain.js';
import { CounterService } from './counters.js';
import { LogService } from './logs.js';
import { OperationMetrics } from './metrics.js';
import { sharedReads } from './shared-reads.js';
import { StatsService } from './stats.js';

export function createTelemetry(
  { redis, space, config, log, now }: Base,
  { caches }: { caches: CacheService },
): Domain<{ counters: CounterService; stats: StatsService; logs: LogService; metrics: OperationMetrics }> {
  const commands = telemetryCommands(redis, space);
  const reads = sharedReads({ flushMs: config.metrics.flushMs, ttlJitter: config.cache.ttlJitter });
  const counters = new CounterService({
    commands,
    cache: caches.cache({ name: 'counters', ...reads }),
    namesMax: config.metrics.namesMax,
    now,
  });
  const stats = new StatsService({ commands, cache: caches.cache({ name: 'stats', ...reads }), now });
  const logs = new LogService({ commands, now });
  const metrics = new OperationMetrics({ counters, stats, logs, options: config.metrics, log });
  metrics.start();
  return {
    services: { counters, stats, logs, metrics },
    jobs: [{ name: 'clean-counters', everyMs: config.metrics.cleanMs, run: async () => void (await counters.clean()) }],
    close: (timeoutMs) => metrics.stop({ timeoutMs }),
  };
}
