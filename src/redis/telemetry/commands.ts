/**
 * The telemetry domain's door to Redis: counters and their registry of names, statistics and the slowest rankings,
 * logs. The services of src/services/telemetry/ reach Redis only through the object telemetryCommands() returns.
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import { pairs } from '../replies.js';
import { script } from '../scripts.js';
import { telemetryKeys } from './keys.js';

const addCountsScript = script<1>('addCounts');
const admitCounterNamesScript = script<number[]>('admitCounterNames');
const cleanCounterScript = script<number>('cleanCounter');
const addStatsScript = script<[string, string]>('addStats');
const writeLogScript = script<1>('writeLog');

/** The fields of a statistic (members of its sorted set, addStats.lua writes them). */
export interface StatFields {
  count: number;
  sum: number;
  sumsq: number;
  min: number;
  max: number;
}

export type TelemetryCommands = ReturnType<typeof telemetryCommands>;

export function telemetryCommands(redis: RedisClient, space: Keyspace) {
  const k = telemetryKeys(space);
  return {
    /** Adds `counts` ([second, count] pairs) to counter `name` at each of `precisions`. */
    async addCounts(a: {
      name: string;
      precisions: readonly number[];
      counts: Iterable<[number, number]>;
    }): Promise<void> {
      await addCountsScript(
        redis,
        a.precisions.map((p) => k.counter(a.name, p)),
        [JSON.stringify(a.precisions), ...[...a.counts].flat()],
      );
    },

    /**
     * Admits `names` into the registry of at most `max` (the first `reserved` whatever its size): whether each is in
     * it now, and the registry's size.
     */
    async admitCounterNames(a: {
      max: number;
      reserved: number;
      names: readonly string[];
    }): Promise<{ admitted: boolean[]; size: number }> {
      const reply = await admitCounterNamesScript(redis, [k.counterNames()], [a.max, a.reserved, ...a.names]);
      return { admitted: a.names.map((_, i) => reply[i] === 1), size: reply[a.names.length]! };
    },

    /** Every name the registry holds. */
    counterNames(): Promise<string[]> {
      return redis.zrange(k.counterNames(), '0', '-1');
    },

    /** Takes `name` out of the registry (its counter is empty). */
    async dropCounterName(a: { name: string }): Promise<void> {
      await redis.zrem(k.counterNames(), a.name);
    },

    /** The samples of counter `name` at `precision`: slot start (s) and count, oldest first. */
    async counter(a: { name: string; precision: number }): Promise<{ second: number; count: number }[]> {
      const hash = await redis.hgetall(k.counter(a.name, a.precision));
      return Object.entries(hash)
        .map(([second, count]) => ({ second: Number(second), count: Number(count) }))
        .sort((x, y) => x.second - y.second);
    },

    /** Drops the samples of counter `name` at `precision` older than `cutoff` (s); returns how many are left. */
    cleanCounter(a: { name: string; precision: number; cutoff: number }): Promise<number> {
      return cleanCounterScript(redis, [k.counter(a.name, a.precision)], [a.cutoff]);
    },

    /** Merges a batch of samples into this hour's statistic; resolves with the hour's count and sum so far. */
    async addStats(
      a: { context: string; type: string; hour: number } & StatFields,
    ): Promise<{ count: number; sum: number }> {
      const s = k.stats(a.context, a.type);
      const [count, sum] = await addStatsScript(
        redis,
        [s.current, s.start, s.last, s.lastStart],
        [a.hour, a.count, a.sum, a.sumsq, a.min, a.max],
      );
      return { count: Number(count), sum: Number(sum) };
    },

    /**
     * The current statistic of `type` in `context` and the hour (ms) it started; null when there is none. A field
     * not written yet reads 0.
     */
    async stats(a: { context: string; type: string }): Promise<{ fields: StatFields; start: number } | null> {
      const s = k.stats(a.context, a.type);
      const [raw, start] = await Promise.all([redis.zrange(s.current, '0', '-1', 'WITHSCORES'), redis.get(s.start)]);
      if (raw.length === 0) return null;
      const f: Partial<StatFields> = Object.fromEntries(pairs(raw));
      return {
        fields: { count: f.count ?? 0, sum: f.sum ?? 0, sumsq: f.sumsq ?? 0, min: f.min ?? 0, max: f.max ?? 0 },
        start: Number(start),
      };
    },

    /**
     * Ranks `averages` in the slowest contexts of `type` in the hour starting at `hour` (ms), keeping the highest
     * `kept`; the ranking expires at `expireAt` (ms).
     */
    async rankSlowest(a: {
      type: string;
      hour: number;
      averages: readonly { context: string; average: number }[];
      kept: number;
      expireAt: number;
    }): Promise<void> {
      const key = k.slowest(a.type, a.hour);
      await redis
        .multi()
        .zadd(key, ...a.averages.flatMap(({ context, average }) => [average, context]))
        .zremrangebyrank(key, 0, -(a.kept + 1))
        .pexpireat(key, a.expireAt)
        .exec();
    },

    /** The `first` contexts with the highest average of `type` in the hour starting at `hour` (ms), highest first. */
    async slowest(a: { type: string; hour: number; first: number }): Promise<{ context: string; average: number }[]> {
      if (a.first === 0) return [];
      const raw = await redis.zrevrange(k.slowest(a.type, a.hour), 0, a.first - 1, 'WITHSCORES');
      return pairs(raw).map(([context, average]) => ({ context, average }));
    },

    /** Writes `lines` ([recent line, common message] pairs) to log `name` at `severity`. */
    async writeLog(a: {
      name: string;
      severity: string;
      hour: number;
      recentKept: number;
      commonKept: number;
      lines: readonly string[];
    }): Promise<void> {
      const l = k.log(a.name, a.severity);
      await writeLogScript(
        redis,
        [l.recent, l.common, l.start, l.last, l.lastStart],
        [a.hour, a.recentKept, a.commonKept, ...a.lines],
      );
    },

    /** The newest `first` lines of log `name` at `severity`, newest first. */
    async recentLog(a: { name: string; severity: string; first: number }): Promise<string[]> {
      if (a.first === 0) return [];
      return redis.lrange(k.log(a.name, a.severity).recent, 0, a.first - 1);
    },

    /** The `first` most frequent messages of this hour in log `name` at `severity`, most frequent first. */
    async commonLog(a: {
      name: string;
      severity: string;
      first: number;
    }): Promise<{ message: string; count: number }[]> {
      if (a.first === 0) return [];
      const raw = await redis.zrevrange(k.log(a.name, a.severity).common, 0, a.first - 1, 'WITHSCORES');
      return pairs(raw).map(([message, count]) => ({ message, count }));
    },
  };
}
