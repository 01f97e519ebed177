/** The telemetry domain: counters, statistics and logs (the book's chapter 5), and the gateway's own operations in them. */
import { telemetryKeys } from '../../redis/telemetry/keys.js';
import type { Base, Domain } from '../shared/domain.js';
import { CounterService } from './counters.js';
import { LogService } from './logs.js';
import { OperationMetrics } from './metrics.js';
import { StatsService } from './stats.js';

export function createTelemetry({
  redis,
  space,
  config,
  log,
  now,
}: Base): Domain<{ counters: CounterService; stats: StatsService; logs: LogService; metrics: OperationMetrics }> {
  const keys = telemetryKeys(space);
  const counters = new CounterService(redis, keys, config.metrics.namesMax, now);
  const stats = new StatsService(redis, keys, now);
  const logs = new LogService(redis, keys, now);
  const metrics = new OperationMetrics(counters, stats, logs, config.metrics, log);
  metrics.start();
  return {
    services: { counters, stats, logs, metrics },
    jobs: [{ name: 'clean-counters', everyMs: config.metrics.cleanMs, run: async () => void (await counters.clean()) }],
    close: () => metrics.stop(),
  };
}
