/** The telemetry domain: counters, statistics and logs (the book's chapter 5), and the gateway's own operations in them. */
import { telemetryCommands } from '../../redis/telemetry/commands.js';
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
  const commands = telemetryCommands(redis, space);
  const counters = new CounterService({ commands, namesMax: config.metrics.namesMax, now });
  const stats = new StatsService({ commands, now });
  const logs = new LogService({ commands, now });
  const metrics = new OperationMetrics({ counters, stats, logs, options: config.metrics, log });
  metrics.start();
  return {
    services: { counters, stats, logs, metrics },
    jobs: [{ name: 'clean-counters', everyMs: config.metrics.cleanMs, run: async () => void (await counters.clean()) }],
    close: () => metrics.stop(),
  };
}
