/**
 * One cache over Redis (issue 26): the seed's three failures prevented. A miss is computed once per deployment: the
 * first caller takes a short lock on the entry (SET NX PX with a token, extended while it computes) and the others,
 * in any process, wait on the entry's doorbell (the poller's, with the lease's end as the backstop) and read what it
 * stored; callers of one key in one process share one promise. Every value's TTL is jittered, and an absence is kept
 * briefly (negative entries) behind an optional Bloom filter that turns away keys that were never created. Writes
 * invalidate what they change; a process's in-memory copies are dropped by the cache's doorbell. Details:
 * docs/cache.md.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { CacheCommands } from '../../redis/cache/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { BloomFilter } from './bloom.js';
import type { CacheFigures } from './figures.js';

/** What callers give a cache (its settings come from CACHE_* through the cache service). */
export interface CacheOptions {
  /** The cache's name: a label of its figures and part of its keys, [a-z_]{1,32}. */
  name: string;
  /** How long a value lives, in ms, before its jitter (± CACHE_TTL_JITTER). Unused when `values` is false. */
  ttlMs?: number;
  /**
   * false: only absences are kept; a found value is computed again each time, without a lock. For lookups whose
   * read costs no more than the cache's own (a document, a user): the cache then only keeps away the keys that do
   * not exist.
   */
  values?: boolean;
  /** Keys this filter says were never added are absent: answered null with no read of Redis and no computation. */
  filter?: BloomFilter;
  /** An in-process layer: at most `entries` values, each kept at most `ttlMs`; dropped in every process on invalidation. */
  memory?: { entries: number; ttlMs: number };
}

/** The CACHE_* settings. */
export interface CacheSettings {
  ttlJitter: number;
  negativeTtlMs: { min: number; max: number };
  lockLeaseMs: number;
}

export interface CacheDeps {
  commands: CacheCommands;
  poller: MailboxPoller;
  settings: CacheSettings;
  figures: CacheFigures;
  log: Logger;
}

/** A waiter's watch of an entry's lock: how many times it rang, and what wakes the waiter. */
interface EntryWatch {
  rings: number;
  wake: (() => void) | undefined;
  unwatch: () => void;
}

const NAME = /^[a-z_]{1,32}$/;
/** A key goes inside its entry's hash tag and its doorbell's rings: no whitespace, no braces, bounded. */
const KEY = /^[^\s{}]{1,1000}$/;
/** Added to a wait for a lease to run out, so that waiters of several processes do not all claim at once. */
const EXPIRY_JITTER_MS = 10;

/** How an entry is stored: 'v' + JSON of a value, '-' for an absence. */
const ABSENT = '-';
const encode = (value: unknown): string => (value === null ? ABSENT : `v${JSON.stringify(value)}`);
const decode = <T>(stored: string): T | null => (stored === ABSENT ? null : (JSON.parse(stored.slice(1)) as T));

export class Cache<T> {
  readonly name: string;
  private readonly ttlMs: number;
  private readonly values: boolean;
  private readonly filter: BloomFilter | undefined;
  private readonly memory: LRUCache<string, { value: T | null }> | undefined;
  /** Loads under way in this process, by key: callers of one key share one. */
  private readonly flights = new Map<string, Promise<T | null>>();
  /** Invalidations heard: a load that saw one come during it keeps nothing in memory. */
  private drops = 0;
  private readonly stopListening: () => void = () => undefined;

  private readonly commands: CacheCommands;
  private readonly poller: MailboxPoller;
  private readonly settings: CacheSettings;
  private readonly figures: CacheFigures;
  private readonly log: Logger;

  constructor(deps: CacheDeps, options: CacheOptions) {
    ({
      commands: this.commands,
      poller: this.poller,
      settings: this.settings,
      figures: this.figures,
      log: this.log,
    } = deps);
    if (!NAME.test(options.name)) throw new Error(`cache name "${options.name}": [a-z_], 1 to 32 of them`);
    this.name = options.name;
    this.values = options.values ?? true;
    this.ttlMs = options.ttlMs ?? 0;
    if (this.values && !(Number.isSafeInteger(this.ttlMs) && this.ttlMs >= 1))
      throw new Error(`cache "${this.name}": ttlMs must be an integer ≥ 1 (ms)`);
    this.filter = options.filter;
    if (options.memory) {
      this.memory = new LRUCache({ max: options.memory.entries, ttl: options.memory.ttlMs });
      const memory = this.memory;
      this.stopListening = this.poller.listen(
        this.commands.memoryBell({ cache: this.name }),
        (key) => {
          this.drops++;
          memory.delete(key);
        },
        // Rings may have been lost while the doorbell connection was down: nothing kept can be trusted.
        () => {
          this.drops++;
          memory.clear();
        },
      );
    }
  }

  /**
   * The value of `key`: from memory, from Redis, or computed by `compute` (null: absent, kept as a negative entry),
   * once across the deployment while others wait for it. A computation that throws stores nothing; the error goes
   * to this caller and those sharing its promise, and the other processes' waiters compute again.
   */
  get({ key, compute }: { key: string; compute: () => Promise<T | null> }): Promise<T | null> {
    checkKey(this.name, key);
    const kept = this.memory?.get(key);
    if (kept) {
      this.figures.count(this.name, kept.value === null ? 'negativeHits' : 'memoryHits');
      return Promise.resolve(kept.value);
    }
    // Without values, a load reads with the caller's own compute (which may differ per caller): not shared.
    const flight = this.values ? this.flights.get(key) : undefined;
    if (flight) {
      this.figures.count(this.name, 'processWaits');
      return flight;
    }
    const load = this.load(key, compute).finally(() => {
      if (this.flights.get(key) === load) this.flights.delete(key);
    });
    if (this.values) this.flights.set(key, load);
    return load;
  }

  /**
   * The values of `keys`, in order. Without `values` (lookups), one filter check, one read per key and one
   * `compute` of every key left; with values, each key as `get` with `compute` of that key alone.
   */
  async getMany({
    keys,
    compute,
  }: {
    keys: readonly string[];
    compute: (keys: string[]) => Promise<(T | null)[]>;
  }): Promise<(T | null)[]> {
    for (const key of keys) checkKey(this.name, key);
    if (this.values)
      return Promise.all(keys.map((key) => this.get({ key, compute: async () => (await compute([key]))[0] ?? null })));
    const out: (T | null)[] = keys.map(() => null);
    const [allowed, stored] = await Promise.all([
      this.filter ? this.filter.existsMany({ items: keys }) : keys.map(() => true),
      this.commands.readEntries({ cache: this.name, keys }),
    ]);
    const left: number[] = [];
    keys.forEach((_key, i) => {
      if (!allowed[i]) this.figures.count(this.name, 'refusals');
      else if (stored[i] !== null) this.figures.count(this.name, stored[i] === ABSENT ? 'negativeHits' : 'hits');
      else left.push(i);
    });
    if (left.length === 0) return out;
    this.figures.count(this.name, 'misses', left.length);
    this.figures.count(this.name, 'computations', left.length);
    const found = await compute(left.map((i) => keys[i]!));
    left.forEach((i, j) => (out[i] = found[j] ?? null));
    const absent = left.filter((i) => out[i] === null).map((i) => keys[i]!);
    if (absent.length > 0)
      await this.commands.writeAbsences({
        cache: this.name,
        keys: absent,
        ttlMs: absent.map(() => this.negativeTtl()),
      });
    return out;
  }

  /** Stores `value` for `key` (a writer that has it), with a jittered TTL; the in-process copies are dropped. */
  async set({ key, value }: { key: string; value: T | null }): Promise<void> {
    checkKey(this.name, key);
    await this.commands.writeEntry({ cache: this.name, key, stored: encode(value), ttlMs: this.ttlFor(value) });
    this.memory?.delete(key);
  }

  /** `set` of many entries at once (each with its own jittered TTL). */
  async setMany({ entries }: { entries: readonly { key: string; value: T | null }[] }): Promise<void> {
    for (const { key } of entries) checkKey(this.name, key);
    await this.commands.writeEntries({
      cache: this.name,
      entries: entries.map(({ key, value }) => ({ key, stored: encode(value), ttlMs: this.ttlFor(value) })),
    });
    for (const { key } of entries) this.memory?.delete(key);
  }

  /**
   * A write changed what `keys` hold: their entries go (a computation under way stores nothing and its waiters
   * compute again), and so do the copies every process keeps in memory (by the cache's doorbell). Call it after
   * the write.
   */
  async invalidate({ keys }: { keys: readonly string[] }): Promise<void> {
    for (const key of keys) checkKey(this.name, key);
    if (keys.length === 0) return;
    for (const key of keys) this.memory?.delete(key);
    this.drops++;
    await this.commands.invalidateEntries({ cache: this.name, keys, tombstoneMs: this.settings.lockLeaseMs });
  }

  /** The ms each key has left in Redis (-2: none): what tests and benchmarks read of the jitter. */
  ttls({ keys }: { keys: readonly string[] }): Promise<number[]> {
    return this.commands.entryTtls({ cache: this.name, keys });
  }

  /** Stops listening to the cache's doorbell. */
  close(): void {
    this.stopListening();
    this.memory?.clear();
  }

  private async load(key: string, compute: () => Promise<T | null>): Promise<T | null> {
    const drops = this.drops;
    const [allowed, [stored]] = await Promise.all([
      this.filter ? this.filter.exists({ item: key }) : true,
      this.commands.readEntries({ cache: this.name, keys: [key] }),
    ]);
    if (!allowed) {
      this.figures.count(this.name, 'refusals');
      return null;
    }
    if (stored != null) {
      const value = decode<T>(stored);
      this.figures.count(this.name, value === null ? 'negativeHits' : 'hits');
      this.keep(key, value, drops);
      return value;
    }
    this.figures.count(this.name, 'misses');
    if (!this.values) {
      this.figures.count(this.name, 'computations');
      const value = await compute();
      if (value === null)
        await this.commands.writeAbsences({ cache: this.name, keys: [key], ttlMs: [this.negativeTtl()] });
      return value;
    }
    return this.compute(key, compute, drops);
  }

  /** The single flight: claim the entry's lock and compute, or wait for its holder and read what it stored. */
  private async compute(key: string, compute: () => Promise<T | null>, drops: number): Promise<T | null> {
    const token = randomBytes(16).toString('base64url');
    const leaseMs = this.settings.lockLeaseMs;
    const entry = { cache: this.name, key };
    let watch = undefined as EntryWatch | undefined;
    let waited = false;
    try {
      for (;;) {
        const rings = watch?.rings ?? 0;
        const claim = await this.commands.claimEntry({ ...entry, token, leaseMs });
        if (typeof claim === 'object' && 'stored' in claim) {
          const value = decode<T>(claim.stored);
          this.figures.count(this.name, waited ? 'deploymentWaits' : value === null ? 'negativeHits' : 'hits');
          this.keep(key, value, drops);
          return value;
        }
        if (claim === 'claimed') return await this.computeHolding(entry, token, compute, drops);
        // Held by another process: wait for its doorbell, or for its lease to run out (a holder that died).
        waited = true;
        if (!watch) {
          const w: EntryWatch = { rings: 0, wake: undefined, unwatch: () => undefined };
          w.unwatch = this.poller.watch(this.commands.entryHead(entry), () => {
            w.rings++;
            w.wake?.();
          });
          watch = w;
        }
        if (watch.rings !== rings) continue; // it moved while we claimed
        const w = watch;
        const ms = Math.min(claim.heldForMs, leaseMs) + Math.random() * EXPIRY_JITTER_MS;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          function done() {
            clearTimeout(timer);
            w.wake = undefined;
            resolve();
          }
          w.wake = done;
        });
      }
    } finally {
      watch?.unwatch();
    }
  }

  /** Computes holding the entry's lock (extended every third of the lease meanwhile), then stores and lets it go. */
  private async computeHolding(
    entry: { cache: string; key: string },
    token: string,
    compute: () => Promise<T | null>,
    drops: number,
  ): Promise<T | null> {
    const leaseMs = this.settings.lockLeaseMs;
    const keepAlive = setInterval(() => {
      this.commands
        .extendEntryLock({ ...entry, token, leaseMs })
        .catch((err: unknown) => this.log.warn({ cache: entry.cache, err }, 'cache lock extension failed'));
    }, leaseMs / 3);
    let value: T | null;
    try {
      this.figures.count(this.name, 'computations');
      value = await compute();
    } catch (err) {
      clearInterval(keepAlive);
      // Lets the lock go at once, so a waiter computes now rather than after the lease.
      await this.commands.fillEntry({ ...entry, token, stored: '', ttlMs: 0 }).catch(() => undefined);
      throw err;
    }
    clearInterval(keepAlive);
    const stored = await this.commands.fillEntry({ ...entry, token, stored: encode(value), ttlMs: this.ttlFor(value) });
    // Not stored: a write invalidated the entry while this computed; its callers still get what they asked before.
    if (stored) this.keep(entry.key, value, drops);
    return value;
  }

  /** Keeps a value in memory, unless an invalidation was heard since its load began. */
  private keep(key: string, value: T | null, drops: number): void {
    if (this.memory && this.drops === drops) this.memory.set(key, { value });
  }

  private ttlFor(value: T | null): number {
    if (value === null) return this.negativeTtl();
    const j = this.settings.ttlJitter;
    return Math.max(1, Math.round(this.ttlMs * (1 + (Math.random() * 2 - 1) * j)));
  }

  private negativeTtl(): number {
    const { min, max } = this.settings.negativeTtlMs;
    return Math.round(min + Math.random() * (max - min));
  }
}

function checkKey(cache: string, key: string): void {
  if (!KEY.test(key)) throw new Error(`cache "${cache}": a key is 1 to 1000 characters, no whitespace or braces`);
}
