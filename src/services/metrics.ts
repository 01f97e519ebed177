/**
 * The gateway's own telemetry: every served operation counted (counter = operation name) and timed (statistic
 * "AccessTime" of the operation, in seconds), all in memory; a timer flushes counters, statistics and logs to
 * Redis every `flushMs`, so the request path sends nothing to Redis for them.
 */
import type { Logger } from 'pino';
import type { CounterService } from './counters.js';
import type { LogService } from './logs.js';
import type { StatsService } from './stats.js';

export const ACCESS_TIME = 'AccessTime';

export class OperationMetrics {
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private lastError = '';

  constructor(
    private readonly counters: CounterService,
    private readonly stats: StatsService,
    private readonly logs: LogService,
    private readonly options: { enabled: boolean; flushMs: number },
    private readonly log: Logger,
  ) {}

  /** One served operation and how long it took. */
  record(operation: string, seconds: number): void {
    if (!this.options.enabled) return;
    this.counters.add(operation);
    this.stats.add(operation, ACCESS_TIME, seconds);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs);
    this.timer.unref();
  }

  /** Writes everything recorded so far (the timer does this every flushMs). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const results = await Promise.allSettled([this.counters.flush(), this.stats.flush(), this.logs.flush()]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const message = failed ? String(failed.reason) : '';
      // `telemetry` keeps this line out of the Redis logs that just failed to flush.
      if (message && message !== this.lastError) this.log.warn({ err: message, telemetry: true }, 'telemetry flush failed; retrying');
      this.lastError = message;
    });
    return this.flushing;
  }

  /** Stops the timer and flushes once more. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
