/** The telemetry domain's scripts, with named arguments. */
import type { RedisClient } from '../clients.js';
import { script } from '../scripts.js';
import type { TelemetryKeys } from './keys.js';

const addCountsScript = script<1>('addCounts');
const admitCounterNamesScript = script<number[]>('admitCounterNames');
const cleanCounterScript = script<number>('cleanCounter');
const addStatsScript = script<[string, string]>('addStats');
const writeLogScript = script<1>('writeLog');

/** Adds `counts` ([second, count] pairs) to counter `name` at each of `precisions`. */
export async function addCounts(
  redis: RedisClient,
  k: TelemetryKeys,
  a: { name: string; precisions: readonly number[]; counts: Iterable<[number, number]> },
): Promise<void> {
  await addCountsScript(
    redis,
    a.precisions.map((p) => k.counter(a.name, p)),
    [JSON.stringify(a.precisions), ...[...a.counts].flat()],
  );
}

/**
 * Admits `names` into the registry of at most `max` (the first `reserved` whatever its size): whether each is in
 * it now, and the registry's size.
 */
export async function admitCounterNames(
  redis: RedisClient,
  k: TelemetryKeys,
  a: { max: number; reserved: number; names: readonly string[] },
): Promise<{ admitted: boolean[]; size: number }> {
  const reply = await admitCounterNamesScript(redis, [k.counterNames()], [a.max, a.reserved, ...a.names]);
  return { admitted: a.names.map((_, i) => reply[i] === 1), size: reply[a.names.length]! };
}

/** Drops the samples of counter `name` at `precision` older than `cutoff` (s); returns how many are left. */
export function cleanCounter(
  redis: RedisClient,
  k: TelemetryKeys,
  a: { name: string; precision: number; cutoff: number },
): Promise<number> {
  return cleanCounterScript(redis, [k.counter(a.name, a.precision)], [a.cutoff]);
}

/** Merges a batch of samples into this hour's statistic; resolves with the hour's count and sum so far. */
export async function addStats(
  redis: RedisClient,
  k: TelemetryKeys,
  a: {
    context: string;
    type: string;
    hour: number;
    count: number;
    sum: number;
    sumsq: number;
    min: number;
    max: number;
  },
): Promise<{ count: number; sum: number }> {
  const s = k.stats(a.context, a.type);
  const [count, sum] = await addStatsScript(
    redis,
    [s.current, s.start, s.last, s.lastStart],
    [a.hour, a.count, a.sum, a.sumsq, a.min, a.max],
  );
  return { count: Number(count), sum: Number(sum) };
}

/** Writes `lines` ([recent line, common message] pairs) to log `name` at `severity`. */
export async function writeLog(
  redis: RedisClient,
  k: TelemetryKeys,
  a: { name: string; severity: string; hour: number; recentKept: number; commonKept: number; lines: readonly string[] },
): Promise<void> {
  const l = k.log(a.name, a.severity);
  await writeLogScript(
    redis,
    [l.recent, l.common, l.start, l.last, l.lastStart],
    [a.hour, a.recentKept, a.commonKept, ...a.lines],
  );
}
