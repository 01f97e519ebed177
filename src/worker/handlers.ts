/** The product's task handlers and periodic jobs: what the worker does, in terms of the services. */
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import { SEND_SCHEDULED_MESSAGE } from '../services/chat/scheduled.js';
import type { PeriodicJob, TaskHandler } from './worker.js';

export function productHandlers(services: Services): TaskHandler[] {
  return [
    {
      queue: services.scheduled.queueName,
      name: SEND_SCHEDULED_MESSAGE,
      run: (args) => services.scheduled.deliver((args as { id: string }).id),
    },
  ];
}

export function productJobs(services: Services, config: Pick<Config, 'metrics' | 'accessLogs'>): PeriodicJob[] {
  return [
    {
      name: 'clean-counters',
      everyMs: config.metrics.cleanMs,
      run: async () => void (await services.counters.clean()),
    },
    // Access-log processor k of N: one worker at a time runs each.
    ...Array.from({ length: config.accessLogs.processors }, (_, i) => ({
      name: `log-processor-${i + 1}`,
      everyMs: config.accessLogs.pollMs,
      run: (signal: AbortSignal) => services.accessLogs.processPending(i + 1, signal),
    })),
  ];
}
