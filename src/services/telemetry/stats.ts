/**
 * Statistics per context and type (the book's chapter 5 update_stats and get_stats): min, max, count, sum and
 * sum of squares of the current hour, the previous hour kept, older ones expired. Samples are added up in memory
 * and merged by `flush()`, one script per statistic; the averages also rank the slowest contexts of each hour (the
 * book's `slowest:`).
 */
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/telemetry/commands.js';
import type { TelemetryKeys } from '../../redis/telemetry/keys.js';
import { HOUR_MS, hourStart } from '../shared/clock.js';
import { pairs } from '../../redis/replies.js';

export interface Stats {
  count: number;
  sum: number;
  min: number;
  max: number;
  average: number;
  stddev: number;
}

/** Contexts kept in each slowest ranking. */
export const SLOWEST_KEPT = 100;

interface Pending {
  context: string;
  type: string;
  count: number;
  sum: number;
  sumsq: number;
  min: number;
  max: number;
}

export class StatsService {
  private pending = new Map<string, Pending>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: TelemetryKeys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds one sample, in memory until the next flush. */
  add(context: string, type: string, value: number): void {
    const id = `${type}\n${context}`;
    const p = this.pending.get(id);
    if (!p) {
      this.pending.set(id, { context, type, count: 1, sum: value, sumsq: value * value, min: value, max: value });
      return;
    }
    p.count++;
    p.sum += value;
    p.sumsq += value * value;
    p.min = Math.min(p.min, value);
    p.max = Math.max(p.max, value);
  }

  /** Moves what was added for `contexts` to `to` (the contexts a bound refused), merging the samples. */
  rename(contexts: ReadonlySet<string>, to: string): void {
    for (const [id, p] of [...this.pending]) {
      if (!contexts.has(p.context)) continue;
      this.pending.delete(id);
      const target = this.pending.get(`${p.type}\n${to}`);
      if (!target) {
        this.pending.set(`${p.type}\n${to}`, { ...p, context: to });
        continue;
      }
      target.count += p.count;
      target.sum += p.sum;
      target.sumsq += p.sumsq;
      target.min = Math.min(target.min, p.min);
      target.max = Math.max(target.max, p.max);
    }
  }

  /** Merges what was added since the last flush, then updates this hour's slowest rankings. */
  async flush(): Promise<void> {
    const pending = [...this.pending.values()];
    if (pending.length === 0) return;
    this.pending = new Map();
    const hour = hourStart(this.now());
    const averages = new Map<string, (number | string)[]>();
    await Promise.all(
      pending.map(async (p) => {
        const { count, sum } = await commands.addStats(this.redis, this.keys, { ...p, hour });
        averages.set(p.type, [...(averages.get(p.type) ?? []), sum / count, p.context]);
      }),
    );
    await Promise.all(
      [...averages].map(([type, scoresAndContexts]) => {
        const key = this.keys.slowest(type, hour);
        return this.redis
          .multi()
          .zadd(key, ...scoresAndContexts)
          .zremrangebyrank(key, 0, -(SLOWEST_KEPT + 1))
          .pexpireat(key, hour + 2 * HOUR_MS)
          .exec();
      }),
    );
  }

  /** This hour's statistic, with average and standard deviation; null when nothing was recorded this hour. */
  async get(context: string, type: string): Promise<Stats | null> {
    const k = this.keys.stats(context, type);
    const [raw, start] = await Promise.all([
      this.redis.zrange(k.current, '0', '-1', 'WITHSCORES'),
      this.redis.get(k.start),
    ]);
    // Not rotated yet: the current statistic is of an hour before this one.
    if (raw.length === 0 || Number(start) < hourStart(this.now())) return null;
    const f: Record<string, number> = Object.fromEntries(pairs(raw));
    const count = f.count ?? 0;
    const sum = f.sum ?? 0;
    const numerator = (f.sumsq ?? 0) - (count ? (sum * sum) / count : 0);
    return {
      count,
      sum,
      min: f.min ?? 0,
      max: f.max ?? 0,
      average: count ? sum / count : 0,
      stddev: Math.sqrt(Math.max(numerator, 0) / (count - 1 || 1)),
    };
  }

  /** The contexts with the highest average of `type` this hour, highest first. */
  async slowest(type: string, first: number): Promise<{ context: string; average: number }[]> {
    if (first === 0) return [];
    const raw = await this.redis.zrevrange(this.keys.slowest(type, hourStart(this.now())), 0, first - 1, 'WITHSCORES');
    return pairs(raw).map(([context, average]) => ({ context, average }));
  }
}
