/**
 * Counters at seven precisions (the book's chapter 5 update_counter, get_counter, clean_counters). Counts are
 * added up in memory and written by `flush()` (at least once a second: the book's own local-aggregation advice),
 * one script per counter, so counting adds no Redis round trip to the code that counts.
 */
import { badInput } from '../errors.js';
import type { RedisClient } from '../redis/clients.js';
import type { Keys } from '../redis/keys.js';

/** Seconds per sample: 1 s, 5 s, 1 min, 5 min, 1 h, 5 h, 1 day. */
export const PRECISIONS = [1, 5, 60, 300, 3600, 18000, 86400] as const;
/** Samples the cleaner keeps per precision (the book's SAMPLE_COUNT). */
export const SAMPLE_COUNT = 120;
/** Distinct names one process counts; more are counted as OTHER (names can come from clients). */
export const NAMES_MAX = 1000;
export const OTHER = 'other';

export interface CounterSample {
  time: Date;
  count: number;
}

export class CounterService {
  /** name → second → count, not yet written */
  private pending = new Map<string, Map<number, number>>();
  private readonly names = new Set<string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts `count` for `name` at `at` (ms), in memory until the next flush. */
  add(name: string, count = 1, at = this.now()): void {
    if (!this.names.has(name)) {
      if (this.names.size >= NAMES_MAX) name = OTHER;
      this.names.add(name);
    }
    const second = Math.floor(at / 1000);
    const bySecond = this.pending.get(name) ?? new Map<number, number>();
    this.pending.set(name, bySecond.set(second, (bySecond.get(second) ?? 0) + count));
  }

  /** Writes what was counted since the last flush; on failure it is kept for the next one. */
  async flush(): Promise<void> {
    const pending = this.pending;
    if (pending.size === 0) return;
    this.pending = new Map();
    try {
      await Promise.all(
        [...pending].map(([name, bySecond]) =>
          this.redis.counterAdd(...PRECISIONS.map((p) => this.keys.counter(name, p)), ...PRECISIONS, ...[...bySecond].flat()),
        ),
      );
      // Every flush says which names exist: a cleaner that just dropped one as empty learns of it again.
      await this.redis.zadd(this.keys.counterNames(), ...[...pending.keys()].flatMap((name) => [0, name]));
    } catch (err) {
      for (const [name, bySecond] of pending) for (const [second, count] of bySecond) this.add(name, count, second * 1000);
      throw err;
    }
  }

  async list(): Promise<string[]> {
    return this.redis.zrange(this.keys.counterNames(), '0', '-1');
  }

  /** A counter's samples at `precision` (seconds, one of PRECISIONS), oldest first. */
  async samples(name: string, precision: number): Promise<CounterSample[]> {
    if (!(PRECISIONS as readonly number[]).includes(precision)) throw badInput('precision', `must be one of ${PRECISIONS.join(', ')} (seconds)`);
    const hash = await this.redis.hgetall(this.keys.counter(name, precision));
    return Object.entries(hash)
      .map(([time, count]) => ({ time: Number(time), count: Number(count) }))
      .sort((a, b) => a.time - b.time)
      .map(({ time, count }) => ({ time: new Date(time * 1000), count }));
  }

  /**
   * Drops samples older than `sampleCount` of their precision before `now` (ms), and counters left empty (the
   * book's clean_counters, one pass). Returns how many counters were dropped.
   */
  async clean(sampleCount = SAMPLE_COUNT, now = this.now()): Promise<number> {
    const nowSeconds = Math.floor(now / 1000);
    let dropped = 0;
    for (const name of await this.list()) {
      const left = await Promise.all(PRECISIONS.map((p) => this.redis.counterClean(this.keys.counter(name, p), nowSeconds - sampleCount * p)));
      if (left.every((n) => n === 0)) {
        await this.redis.zrem(this.keys.counterNames(), name);
        dropped++;
      }
    }
    return dropped;
  }
}
