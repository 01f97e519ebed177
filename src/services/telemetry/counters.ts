/**
 * Counters at seven precisions (the book's chapter 5 update_counter, get_counter, clean_counters), added up in memory
 * and written by `flush()`, so counting adds no round trip. Names can come from clients: a deployment-wide registry
 * holds at most `namesMax`, and counts of names it refuses go to OTHER (docs/operations.md).
 */
import { badInput } from '../../errors.js';
import type { TelemetryCommands } from '../../redis/telemetry/commands.js';
import type { Cache } from '../cache/index.js';
import { checkName } from './names.js';

/** Seconds per sample: 1 s, 5 s, 1 min, 5 min, 1 h, 5 h, 1 day. */
export const PRECISIONS = [1, 5, 60, 300, 3600, 18000, 86400] as const;
/** Samples the cleaner keeps per precision (the book's SAMPLE_COUNT). */
export const SAMPLE_COUNT = 120;
/** Where counts of names past the registry's bound go. */
export const OTHER = 'other';
/** Names every registry admits, however full: OTHER and the name of operations without one. */
export const ANONYMOUS = 'anonymous';
const RESERVED = [ANONYMOUS, OTHER];

export interface CounterSample {
  time: Date;
  count: number;
}

/** A counter's samples as Redis holds them (what its shared cache keeps). */
type StoredSamples = { second: number; count: number }[];

export interface CounterDeps {
  commands: TelemetryCommands;
  /** What `cachedSamples` reads through (shared-reads.ts). */
  cache: Cache<StoredSamples>;
  /** The most names the deployment's registry holds (METRICS_NAMES_MAX). */
  namesMax: number;
  /** The clock (ms) counts are taken at. */
  now: () => number;
}

/** One count: `count` (1 when absent) of `name` at `at` (ms, now when absent). */
export interface Count {
  name: string;
  count?: number;
  at?: number;
}

export class CounterService {
  /** name → second → count, not yet written */
  private pending = new Map<string, Map<number, number>>();
  /** Names the registry holds, as last learnt (the whole registry while it is full). */
  private known = new Set<string>();
  private full = false;
  private readonly commands: TelemetryCommands;
  private readonly cache: Cache<StoredSamples>;
  private readonly namesMax: number;
  private readonly now: () => number;

  constructor(deps: CounterDeps) {
    ({ commands: this.commands, cache: this.cache, namesMax: this.namesMax, now: this.now } = deps);
  }

  /** Counts, in memory until the next flush (every served operation: no Redis here). Returns the name counted under. */
  add({ name, count = 1, at = this.now() }: Count): string {
    let bySecond = this.pending.get(name);
    if (!bySecond) {
      if (!this.known.has(name) && (this.full || this.pending.size >= this.namesMax + RESERVED.length)) name = OTHER;
      bySecond = this.pending.get(name) ?? new Map<number, number>();
      this.pending.set(name, bySecond);
    }
    const second = Math.floor(at / 1000);
    bySecond.set(second, (bySecond.get(second) ?? 0) + count);
    return name;
  }

  /**
   * Writes what was counted since the last flush, after admitting its names; on failure it is kept for the next
   * one. Returns the names the registry refused (their counts went to OTHER).
   */
  async flush(): Promise<ReadonlySet<string>> {
    const pending = this.pending;
    if (pending.size === 0) return new Set();
    this.pending = new Map();
    const refused = new Set<string>();
    try {
      // Every flush admits its names again: a cleaner that just dropped one as empty learns of it again.
      // OTHER always: refused names' counts go there.
      const { names, admitted, size } = await this.admit([OTHER, ...pending.keys()]);
      if (this.known.size > this.namesMax + RESERVED.length) this.known.clear();
      names.forEach((name, i) => (admitted[i] ? this.known.add(name) : refused.add(name)));
      this.full = size >= this.namesMax;
      if (this.full && this.known.size !== size) {
        this.known = new Set(await this.commands.counterNames());
      }
      for (const name of refused) {
        const other = pending.get(OTHER) ?? new Map<number, number>();
        for (const [second, count] of pending.get(name)!) other.set(second, (other.get(second) ?? 0) + count);
        pending.set(OTHER, other);
        pending.delete(name);
      }
      await Promise.all(
        [...pending].map(([name, bySecond]) =>
          this.commands.addCounts({ name, precisions: PRECISIONS, counts: bySecond }),
        ),
      );
    } catch (err) {
      for (const [name, bySecond] of pending)
        for (const [second, count] of bySecond) this.add({ name, count, at: second * 1000 });
      throw err;
    }
    // Admitted again now that the counts are written: the registry and the counts are on different slots, and a
    // cleaner (another process) may have dropped a name it found empty between the admission and the write. Outside
    // the try (written counts are never queued again) and without failing the flush (its refusals are still to be
    // told): a failure here leaves open only that window, until the name is counted again.
    await this.admit(pending.keys()).catch(() => undefined);
    return refused;
  }

  /**
   * Admits `names` to the registry, RESERVED ones first (always admitted, however full): the names in the order
   * asked, whether each was admitted, and the registry's size.
   */
  private async admit(names: Iterable<string>): Promise<{ names: string[]; admitted: boolean[]; size: number }> {
    const all = new Set(names);
    const reserved = RESERVED.filter((n) => all.has(n));
    const ordered = [...reserved, ...[...all].filter((n) => !RESERVED.includes(n))];
    const { admitted, size } = await this.commands.admitCounterNames({
      max: this.namesMax,
      reserved: reserved.length,
      names: ordered,
    });
    return { names: ordered, admitted, size };
  }

  /** The names of the counters. */
  list(): Promise<string[]> {
    return this.commands.counterNames();
  }

  /** A counter's samples at `precision` (seconds, one of PRECISIONS), oldest first, as Redis holds them now. */
  async samples({ name, precision }: { name: string; precision: number }): Promise<CounterSample[]> {
    checkCounter(name, precision);
    return toSamples(await this.commands.counter({ name, precision }));
  }

  /**
   * `samples` for readers that many ask at once (the `counter` field): through the shared cache, at most
   * METRICS_FLUSH_MS older than Redis (shared-reads.ts), when this process knows `name` is in the registry (it
   * counted it, or the registry is full and it read it); any other name is read as `samples` does, so that names a
   * client makes up cost what they did before and the cache holds at most the registry's names at each precision.
   */
  async cachedSamples({ name, precision }: { name: string; precision: number }): Promise<CounterSample[]> {
    checkCounter(name, precision);
    if (!this.known.has(name)) return toSamples(await this.commands.counter({ name, precision }));
    // Never null (an absent counter is []), so no negative entry outlives the bound.
    const stored = await this.cache.get({
      key: `${precision}:${name}`,
      compute: () => this.commands.counter({ name, precision }),
    });
    return toSamples(stored ?? []);
  }

  /**
   * Drops samples older than `sampleCount` (SAMPLE_COUNT when absent) of their precision before `now` (ms, the
   * clock's when absent), and counters left empty (the book's clean_counters, one pass). Returns how many counters
   * were dropped.
   */
  async clean({
    sampleCount = SAMPLE_COUNT,
    now = this.now(),
  }: { sampleCount?: number; now?: number } = {}): Promise<number> {
    const nowSeconds = Math.floor(now / 1000);
    let dropped = 0;
    const samplesLeft = async (name: string) =>
      (
        await Promise.all(
          PRECISIONS.map((precision) =>
            this.commands.cleanCounter({ name, precision, cutoff: nowSeconds - sampleCount * precision }),
          ),
        )
      ).some((n) => n > 0);
    for (const name of await this.list()) {
      if (await samplesLeft(name)) continue;
      await this.commands.dropCounterName({ name });
      // A flush (another process) may have written counts since they were read: then the name goes back, as that
      // flush's own second admission may have come before this drop.
      if (await samplesLeft(name)) await this.admit([name]);
      else dropped++;
    }
    return dropped;
  }
}

function checkCounter(name: string, precision: number): void {
  checkName('name', name);
  if (!(PRECISIONS as readonly number[]).includes(precision))
    throw badInput('precision', `must be one of ${PRECISIONS.join(', ')} (seconds)`);
}

const toSamples = (stored: StoredSamples): CounterSample[] =>
  stored.map(({ second, count }) => ({ time: new Date(second * 1000), count }));
