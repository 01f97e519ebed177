/**
 * Statistics per context and type (the book's chapter 5 update_stats and get_stats): min, max, count, sum and
 * sum of squares of the current hour, the previous hour kept, older ones expired. Samples are added up in memory
 * and merged by `flush()`, one script per statistic; the averages also rank the slowest contexts of each hour (the
 * book's `slowest:`).
 */
import type { StatFields, TelemetryCommands } from '../../redis/telemetry/commands.js';
import type { Cache } from '../cache/index.js';
import { HOUR_MS, hourStart } from '../shared/clock.js';
import { checkPage, type Page } from '../shared/paging.js';
import { checkName } from './names.js';
import { SHARED_READS_KEPT } from './shared-reads.js';

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
/** A page of a slowest ranking: at most all it keeps. */
export const SLOWEST_PAGE: Page = { default: 10, max: SLOWEST_KEPT };

interface Pending extends StatFields {
  context: string;
  type: string;
}

/** A statistic as Redis holds it (what its shared cache keeps): null when there is none. */
type StoredStats = { current: { fields: StatFields; start: number } | null };

export interface StatsDeps {
  commands: TelemetryCommands;
  /** What `cachedGet` reads through (shared-reads.ts). */
  cache: Cache<StoredStats>;
  /** The clock (ms) that tells the hour. */
  now: () => number;
}

/** A statistic: of `type` (such as AccessTime) in `context` (such as an operation's name). */
export interface StatName {
  context: string;
  type: string;
}

export class StatsService {
  private pending = new Map<string, Pending>();
  /** The statistics this process wrote (by idOf), at most about SHARED_READS_KEPT: what `cachedGet` caches. */
  private written = new Set<string>();
  private readonly commands: TelemetryCommands;
  private readonly cache: Cache<StoredStats>;
  private readonly now: () => number;

  constructor(deps: StatsDeps) {
    ({ commands: this.commands, cache: this.cache, now: this.now } = deps);
  }

  /** Adds one sample, in memory until the next flush (every served operation: no Redis here). */
  add({ context, type, value }: StatName & { value: number }): void {
    const id = idOf({ context, type });
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
  rename({ contexts, to }: { contexts: ReadonlySet<string>; to: string }): void {
    for (const [id, p] of [...this.pending]) {
      if (!contexts.has(p.context)) continue;
      this.pending.delete(id);
      const target = this.pending.get(idOf({ context: to, type: p.type }));
      if (!target) {
        this.pending.set(idOf({ context: to, type: p.type }), { ...p, context: to });
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
    if (this.written.size > SHARED_READS_KEPT) this.written.clear();
    for (const id of this.pending.keys()) this.written.add(id);
    this.pending = new Map();
    const hour = hourStart(this.now());
    const averages = new Map<string, { context: string; average: number }[]>();
    await Promise.all(
      pending.map(async (p) => {
        const { count, sum } = await this.commands.addStats({ ...p, hour });
        averages.set(p.type, [...(averages.get(p.type) ?? []), { context: p.context, average: sum / count }]);
      }),
    );
    await Promise.all(
      [...averages].map(([type, ofType]) =>
        this.commands.rankSlowest({
          type,
          hour,
          averages: ofType,
          kept: SLOWEST_KEPT,
          expireAt: hour + 2 * HOUR_MS,
        }),
      ),
    );
  }

  /** This hour's statistic, with average and standard deviation, as Redis holds it now; null when nothing was recorded this hour. */
  async get({ context, type }: StatName): Promise<Stats | null> {
    checkName('context', context);
    checkName('type', type);
    return this.ofThisHour(await this.commands.stats({ context, type }));
  }

  /**
   * `get` for readers that many ask at once (the `stats` field): through the shared cache, at most
   * METRICS_FLUSH_MS older than Redis (shared-reads.ts), when this process wrote the statistic (the gateway: an
   * operation's AccessTime); any other is read as `get` does, so that names a client makes up cost what they did
   * before and the cache holds at most what the process writes.
   */
  async cachedGet({ context, type }: StatName): Promise<Stats | null> {
    checkName('context', context);
    checkName('type', type);
    if (!this.written.has(idOf({ context, type })))
      return this.ofThisHour(await this.commands.stats({ context, type }));
    // The type's length first: names may hold ':'. Never null, so no negative entry outlives the bound.
    const stored = await this.cache.get({
      key: `${type.length}:${type}${context}`,
      compute: async () => ({ current: await this.commands.stats({ context, type }) }),
    });
    return this.ofThisHour(stored?.current ?? null);
  }

  /** The `first` contexts with the highest average of `type` this hour, highest first. */
  async slowest({ type, first }: { type: string; first: number }): Promise<{ context: string; average: number }[]> {
    checkPage('first', first, SLOWEST_PAGE.max);
    return this.commands.slowest({ type, hour: hourStart(this.now()), first });
  }

  /** A statistic with its average and standard deviation, or null when it is not of this hour. */
  private ofThisHour(current: { fields: StatFields; start: number } | null): Stats | null {
    // Not rotated yet: the current statistic is of an hour before this one.
    if (!current || current.start < hourStart(this.now())) return null;
    const { count, sum, sumsq, min, max } = current.fields;
    const numerator = sumsq - (count ? (sum * sum) / count : 0);
    return {
      count,
      sum,
      min,
      max,
      average: count ? sum / count : 0,
      stddev: Math.sqrt(Math.max(numerator, 0) / (count - 1 || 1)),
    };
  }
}

/** A statistic's id in this process's maps. */
const idOf = ({ context, type }: StatName): string => `${type}\n${context}`;
