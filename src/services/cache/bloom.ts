/**
 * A scalable Bloom filter in Redis (a bitmap and Lua: Debian's Redis has no RedisBloom): `reserve`, `add`,
 * `exists`, growing by a sub-filter of twice the capacity at half the error rate when the newest is full, the whole
 * filter in one slot (src/redis/lib/bloom.lua). A filter cannot forget: a deleted item still passes it, and the
 * cache's negative entry stops it.
 *
 * A filter with a `source` learns what existed before it once: the first lookup that finds it not ready starts a
 * fill (one process at a time, under a lease that a dead filler lets run out), which reads the source (a SCAN, a
 * ZSCAN) with its progress in the log and then marks the filter ready. Until then the filter says "maybe" to
 * everything, so it never refuses an item that exists; creators add their items before creating them, so items
 * created during the fill are in it too.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CacheCommands, SubFilter } from '../../redis/cache/commands.js';

export interface BloomOptions {
  /** The filter's name: part of its keys, [a-z_]{1,32}. */
  name: string;
  /** Every item that existed before the filter, in batches: what its one-off fill reads. */
  source?: () => AsyncIterable<readonly string[]>;
}

export interface BloomDeps {
  commands: CacheCommands;
  /** CACHE_BLOOM_CAPACITY and CACHE_BLOOM_ERROR_RATE: the first sub-filter of a filter created by an add or a fill. */
  defaults: { capacity: number; errorRate: number };
  log: Logger;
}

const NAME = /^[a-z_]{1,32}$/;
/** Items per script call: a call holds Redis for about 5 µs per item. */
const BATCH = 1000;
/** The fill's lease: extended every third of it while the fill runs, so a filler that dies is replaced this soon. */
const FILL_LEASE_MS = 10_000;
/** A fill that failed is tried again by a lookup this much later at the earliest. */
const FILL_RETRY_MS = 10_000;
/** The fill logs its progress this often. */
const PROGRESS_MS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class BloomFilter {
  readonly name: string;
  private readonly source: BloomOptions['source'];
  private filling: Promise<void> | undefined;
  private retryAt = 0;
  private closed = false;

  private readonly commands: CacheCommands;
  private readonly defaults: { capacity: number; errorRate: number };
  private readonly log: Logger;

  constructor(deps: BloomDeps, options: BloomOptions) {
    ({ commands: this.commands, defaults: this.defaults, log: this.log } = deps);
    if (!NAME.test(options.name)) throw new Error(`Bloom filter name "${options.name}": [a-z_], 1 to 32 of them`);
    this.name = options.name;
    this.source = options.source;
  }

  /**
   * Creates the filter for `capacity` items at `errorRate` (false-positive rate when full), ready: it knows every
   * item there is (none). False when it existed (it keeps its layout).
   */
  reserve({ capacity, errorRate }: { capacity: number; errorRate: number }): Promise<boolean> {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer');
    if (!(errorRate > 0 && errorRate < 1)) throw new Error('errorRate must be between 0 and 1');
    return this.commands.reserveBloom({ name: this.name, capacity, errorRate });
  }

  /** Adds `item`; false when the filter had it (or said so: a false positive). */
  async add({ item }: { item: string }): Promise<boolean> {
    return (await this.addMany({ items: [item] }))[0]!;
  }

  /** Adds `items`, a script call per 1,000; per item, whether it was new. */
  async addMany({ items }: { items: readonly string[] }): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < items.length; i += BATCH)
      out.push(
        ...(await this.commands.addToBloom({ name: this.name, items: items.slice(i, i + BATCH), ...this.defaults })),
      );
    return out;
  }

  /** Whether the filter may have `item` (false: it was surely never added). */
  async exists({ item }: { item: string }): Promise<boolean> {
    return (await this.existsMany({ items: [item] }))[0]!;
  }

  /** Per item, whether the filter may have it; every item may while the filter is not ready (being filled). */
  async existsMany({ items }: { items: readonly string[] }): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < items.length; i += BATCH) {
      const chunk = items.slice(i, i + BATCH);
      const flags = await this.commands.bloomHas({ name: this.name, items: chunk });
      if (!flags) {
        this.startFill();
        return items.map(() => true);
      }
      out.push(...flags);
    }
    return out;
  }

  /** Whether the filter is ready, and its sub-filters (capacity, items, bits, hashes, error rate). */
  info(): Promise<{ ready: boolean; filters: SubFilter[] }> {
    return this.commands.bloomInfo({ name: this.name });
  }

  /**
   * Resolves once the filter is ready: fills it from its source when no other process does (a filter without a
   * source is only reserved, ready). One fill per process at a time.
   */
  fill(): Promise<void> {
    this.filling ??= this.runFill().finally(() => (this.filling = undefined));
    return this.filling;
  }

  /** Stops a fill under way (at its next batch; another process finishes it after the lease). */
  async close(): Promise<void> {
    this.closed = true;
    await this.filling?.catch(() => undefined);
  }

  private startFill(): void {
    if (this.filling || this.closed || Date.now() < this.retryAt) return;
    this.fill().catch((err: unknown) => {
      this.retryAt = Date.now() + FILL_RETRY_MS;
      this.log.warn({ filter: this.name, err }, 'Bloom filter fill failed; a later lookup tries again');
    });
  }

  private async runFill(): Promise<void> {
    const token = randomBytes(16).toString('base64url');
    while (!this.closed) {
      const claim = await this.commands.claimBloomFill({
        name: this.name,
        token,
        leaseMs: FILL_LEASE_MS,
        ...this.defaults,
      });
      if (claim === 'ready') return;
      if (typeof claim === 'object') {
        await sleep(Math.min(claim.heldForMs, 1000) + Math.random() * 50);
        continue;
      }
      let lost = false;
      const keepAlive = setInterval(() => {
        this.commands.extendBloomFill({ name: this.name, token, leaseMs: FILL_LEASE_MS }).then(
          (extended) => (lost ||= !extended),
          (err: unknown) => this.log.warn({ filter: this.name, err }, 'Bloom filter fill lease extension failed'),
        );
      }, FILL_LEASE_MS / 3);
      const started = performance.now();
      let items = 0;
      let logged = started;
      try {
        this.log.info({ filter: this.name }, 'Bloom filter: adding the items that existed before it');
        for await (const batch of this.source?.() ?? []) {
          if (lost || this.closed) break;
          await this.addMany({ items: batch });
          items += batch.length;
          if (performance.now() - logged >= PROGRESS_MS) {
            logged = performance.now();
            this.log.info({ filter: this.name, items }, 'Bloom filter: filling');
          }
        }
      } finally {
        clearInterval(keepAlive);
      }
      if (lost || this.closed) continue;
      if (await this.commands.markBloomReady({ name: this.name, token })) {
        const ms = Math.round(performance.now() - started);
        this.log.info({ filter: this.name, items, ms }, 'Bloom filter: ready');
        return;
      }
    }
  }
}
