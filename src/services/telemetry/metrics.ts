/**
 * The gateway's own telemetry: every served operation counted (counter = operation name) and timed (statistic
 * "AccessTime" of the operation, in seconds), all in memory; a timer flushes counters, statistics and logs to
 * Redis every `flushMs`, so the request path sends nothing to Redis for them. Operation names come from clients:
 * one that is not 1-64 of [A-Za-z0-9_] counts as `anonymous`, and past the registry's bound (CounterService) as
 * `other`, statistics included.
 */
import type { Logger } from 'pino';
import { ANONYMOUS, OTHER, type CounterService } from './counters.js';
import type { LogService } from './logs.js';
import type { StatsService } from './stats.js';

export const ACCESS_TIME = 'AccessTime';
const OPERATION_NAME = /^[A-Za-z0-9_]{1,64}$/;

export interface MetricsOptions {
  /** Whether operations are counted and timed (METRICS). */
  enabled: boolean;
  /** How often what was recorded is written to Redis (METRICS_FLUSH_MS). */
  flushMs: number;
}

export interface OperationMetricsDeps {
  counters: CounterService;
  stats: StatsService;
  logs: LogService;
  options: MetricsOptions;
  log: Logger;
}

/** A served operation: its name as the client sent it (undefined without one) and how long it took. */
export interface OperationTiming {
  operation: string | undefined;
  seconds: number;
}

export class OperationMetrics {
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Flushes asked and not done: the timer adds none to them (Redis away, each waits out its retries). */
  private pending = 0;
  private lastError = '';
  private readonly counters: CounterService;
  private readonly stats: StatsService;
  private readonly logs: LogService;
  private readonly options: MetricsOptions;
  private readonly log: Logger;

  constructor(deps: OperationMetricsDeps) {
    ({ counters: this.counters, stats: this.stats, logs: this.logs, options: this.options, log: this.log } = deps);
  }

  /**
   * One served operation and how long it took (every operation: in memory, no Redis). Returns the name it was
   * counted under (bounded: `anonymous`, `other`), which `GET /metrics` labels it with; undefined with METRICS=off.
   */
  record({ operation, seconds }: OperationTiming): string | undefined {
    if (!this.options.enabled) return undefined;
    const name = this.counters.add({
      name: operation !== undefined && OPERATION_NAME.test(operation) ? operation : ANONYMOUS,
    });
    this.stats.add({ context: name, type: ACCESS_TIME, value: seconds });
    return name;
  }

  /** The `first` operations with the highest average access time this hour, highest first. */
  async slowest({ first }: { first: number }): Promise<{ name: string; averageSeconds: number }[]> {
    const ranked = await this.stats.slowest({ type: ACCESS_TIME, first });
    return ranked.map(({ context, average }) => ({ name: context, averageSeconds: average }));
  }

  start(): void {
    this.timer ??= setInterval(() => {
      if (this.pending === 0) void this.flush();
    }, this.options.flushMs);
    this.timer.unref();
  }

  /** Writes everything recorded so far (the timer does this every flushMs). */
  flush(): Promise<void> {
    this.pending++;
    this.flushing = this.flushing.then(async () => {
      const flushStats = async () => {
        // Statistics follow the counters' registry: a name it refused is timed as OTHER too.
        this.stats.rename({ contexts: await this.counters.flush(), to: OTHER });
        await this.stats.flush();
      };
      const results = await Promise.allSettled([flushStats(), this.logs.flush()]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const message = failed ? String(failed.reason) : '';
      // `telemetry` keeps this line out of the Redis logs that just failed to flush.
      if (message && message !== this.lastError)
        this.log.warn({ err: failed!.reason, telemetry: true }, 'telemetry flush failed; retrying');
      this.lastError = message;
      this.pending--;
    });
    return this.flushing;
  }

  /** Stops the timer and flushes once more, waiting for it at most `timeoutMs` (after that, what it holds is lost). */
  async stop({ timeoutMs }: { timeoutMs: number }): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    const timedOut = await Promise.race([this.flush().then(() => false), late]);
    clearTimeout(timer);
    if (timedOut)
      this.log.warn(
        { timeoutMs, telemetry: true },
        'telemetry not written to Redis by the shutdown deadline; what was recorded since the last flush is lost',
      );
  }
}
