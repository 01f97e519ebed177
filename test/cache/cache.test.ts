/**
 * The shared cache on real Redis, two "processes" being two sets of services with one KEY_PREFIX (and a real child
 * process where one must die): single flight across processes, a dead holder's lease, TTL jitter, negative entries,
 * invalidation across processes (in-memory copies included), the Bloom filter's false-positive rate and growth.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { doorbellsSettled, eventually, redisEnv, uniqueName, uniquePrefix } from '../support/app.js';
import { spawnEntry } from '../support/entries.js';
import { disposeLater } from '../support/dispose.js';
import { startTestServices } from '../support/services.js';

/** Two processes' services on one deployment (one key prefix). */
function twoProcesses(env: Record<string, string> = {}) {
  const KEY_PREFIX = uniquePrefix();
  return [startTestServices({ KEY_PREFIX, ...env }), startTestServices({ KEY_PREFIX, ...env })] as const;
}

describe('single flight', () => {
  it('computes a cold key once for 100 concurrent reads over two processes; the others wait and read it', async () => {
    const [a, b] = twoProcesses();
    const caches = [a, b].map((p) => p.services.caches.cache<{ n: number }>({ name: 'stampede', ttlMs: 60_000 }));
    let computations = 0;
    const compute = async () => {
      computations++;
      await sleep(100);
      return { n: 42 };
    };
    const key = uniqueName('hot');
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => caches[i % 2]!.get({ key, compute })));
    expect(computations).toBe(1);
    expect(results.every((r) => r?.n === 42)).toBe(true);
    const [fa, fb] = [a, b].map((p) => p.services.caches.figures('stampede'));
    expect(fa!.computations + fb!.computations).toBe(1);
    // 49 callers shared their process's promise in each; the other process's load waited for the holder.
    expect(fa!.processWaits + fb!.processWaits).toBe(98);
    expect(fa!.deploymentWaits + fb!.deploymentWaits).toBeLessThanOrEqual(1); // 0 if it came after the fill
    // Later reads are hits.
    expect(await caches[1]!.get({ key, compute })).toEqual({ n: 42 });
    expect(computations).toBe(1);
  });

  it("lets a waiter compute once a killed holder's lease runs out", async () => {
    const KEY_PREFIX = uniquePrefix();
    const env = { ...redisEnv(), KEY_PREFIX, CACHE_LOCK_LEASE_MS: '1000' };
    const key = uniqueName('orphan');
    const holder = spawnEntry('test/cache/holder.ts', env, [key]);
    disposeLater(() => Promise.resolve(void holder.kill('SIGKILL')));
    let out = '';
    holder.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    holder.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    expect(await eventually(() => Promise.resolve(out.includes('computing')), 20_000)).toBe(true);
    const { services } = startTestServices({ KEY_PREFIX, CACHE_LOCK_LEASE_MS: '1000' });
    const cache = services.caches.cache<string>({ name: 'stampede', ttlMs: 60_000 });
    let computations = 0;
    const started = performance.now();
    const waiting = cache.get({ key, compute: () => Promise.resolve(`computed ${++computations}`) });
    // It waits on a live holder (its lease is extended while it computes)...
    await sleep(1500);
    expect(computations).toBe(0);
    holder.kill('SIGKILL');
    // ...and computes once the dead holder's lease has run out.
    expect(await waiting).toBe('computed 1');
    expect(performance.now() - started).toBeGreaterThan(1500);
    expect(services.caches.figures('stampede').computations).toBe(1);
  });

  it('lets the next waiter compute at once when the computation throws, and stores nothing', async () => {
    const [a, b] = twoProcesses();
    const ca = a.services.caches.cache<string>({ name: 'failing', ttlMs: 60_000 });
    const cb = b.services.caches.cache<string>({ name: 'failing', ttlMs: 60_000 });
    const key = uniqueName('boom');
    let computing: () => void = () => undefined;
    const holds = new Promise<void>((resolve) => (computing = resolve));
    const failing = ca.get({
      key,
      compute: async () => {
        computing();
        await sleep(200);
        throw new Error('boom');
      },
    });
    await holds;
    const started = performance.now();
    const other = cb.get({ key, compute: () => Promise.resolve('second') });
    await expect(failing).rejects.toThrow('boom');
    expect(await other).toBe('second');
    expect(performance.now() - started).toBeLessThan(2000); // not the 3 s lease
  });
});

describe('jittered TTLs', () => {
  it('spreads the TTLs of 200 keys written together over ±10 %', async () => {
    const { services } = startTestServices();
    const cache = services.caches.cache<number>({ name: 'jitter', ttlMs: 100_000 });
    const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((key, i) => cache.get({ key, compute: () => Promise.resolve(i) })));
    const ttls = await cache.ttls({ keys });
    expect(Math.min(...ttls)).toBeGreaterThanOrEqual(89_000);
    expect(Math.max(...ttls)).toBeLessThanOrEqual(110_000);
    // Spread over the band, not one value: both its outer fifths are reached, and most TTLs differ.
    expect(Math.min(...ttls)).toBeLessThan(94_000);
    expect(Math.max(...ttls)).toBeGreaterThan(106_000);
    expect(new Set(ttls.map((t) => Math.round(t / 100))).size).toBeGreaterThan(100);
  });
});

describe('negative entries', () => {
  it('keeps an absence for the negative TTL, then computes again', async () => {
    const { services } = startTestServices({ CACHE_NEGATIVE_TTL_MS: '300-500' });
    const cache = services.caches.cache<string>({ name: 'negative', ttlMs: 60_000 });
    let computations = 0;
    const compute = () => Promise.resolve((computations++, null));
    const key = uniqueName('nobody');
    expect(await cache.get({ key, compute })).toBeNull();
    expect(await cache.get({ key, compute })).toBeNull();
    expect(computations).toBe(1);
    expect(services.caches.figures('negative').negativeHits).toBe(1);
    const [ttl] = await cache.ttls({ keys: [key] });
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(500);
    await sleep(600);
    expect(await cache.get({ key, compute })).toBeNull();
    expect(computations).toBe(2);
  });

  it('jitters the negative TTLs over their range', async () => {
    const { services } = startTestServices({ CACHE_NEGATIVE_TTL_MS: '30000-60000' });
    const cache = services.caches.cache<string>({ name: 'negative', ttlMs: 60_000 });
    const keys = Array.from({ length: 100 }, (_, i) => `none${i}`);
    await Promise.all(keys.map((key) => cache.get({ key, compute: () => Promise.resolve(null) })));
    const ttls = await cache.ttls({ keys });
    expect(Math.min(...ttls)).toBeGreaterThan(29_000);
    expect(Math.max(...ttls)).toBeLessThanOrEqual(60_000);
    expect(Math.max(...ttls) - Math.min(...ttls)).toBeGreaterThan(20_000);
  });

  it('never keeps an absence that a creation raced (lookups without values: the tombstone refuses it)', async () => {
    const { services } = startTestServices();
    const cache = services.caches.cache<true>({ name: 'lookups', values: false });
    const key = uniqueName('racer');
    let exists = false;
    let read: () => void = () => undefined;
    const hasRead = new Promise<void>((resolve) => (read = resolve));
    // The read finds nothing, then the creation and its invalidation happen before the absence is written.
    const lookup = cache.get({
      key,
      compute: async () => {
        const found = exists;
        read();
        await sleep(100);
        return found ? true : null;
      },
    });
    await hasRead;
    exists = true;
    await cache.invalidate({ keys: [key] });
    expect(await lookup).toBeNull(); // what it read before the creation
    expect(await cache.get({ key, compute: () => Promise.resolve(exists ? true : null) })).toBe(true);
  });
});

describe('invalidation', () => {
  it('drops the entry and every process’s in-memory copy: the other process shows the change within a second', async () => {
    const [a, b] = twoProcesses();
    await doorbellsSettled(a, b); // a resync drops what a process keeps in memory
    const options = { name: 'votes', ttlMs: 60_000, memory: { entries: 100, ttlMs: 60_000 } };
    const ca = a.services.caches.cache<{ votes: number }>(options);
    const cb = b.services.caches.cache<{ votes: number }>(options);
    let votes = 0;
    const compute = () => Promise.resolve({ votes });
    const key = uniqueName('doc');
    expect(await ca.get({ key, compute })).toEqual({ votes: 0 });
    expect(await cb.get({ key, compute })).toEqual({ votes: 0 });
    // B answers from memory now: no Redis, no computation.
    expect(await cb.get({ key, compute })).toEqual({ votes: 0 });
    expect(b.services.caches.figures('votes').memoryHits).toBe(1);
    // A vote on A: the write, then the invalidation.
    votes = 1;
    const voted = performance.now();
    await ca.invalidate({ keys: [key] });
    expect(await eventually(async () => (await cb.get({ key, compute }))?.votes === 1, 1000, 5)).toBe(true);
    expect(performance.now() - voted).toBeLessThan(1000);
  });

  it('stores nothing a computation under way computed before the write; its waiters compute again', async () => {
    const [a, b] = twoProcesses();
    const ca = a.services.caches.cache<number>({ name: 'racing', ttlMs: 60_000 });
    const cb = b.services.caches.cache<number>({ name: 'racing', ttlMs: 60_000 });
    let version = 1;
    const key = uniqueName('doc');
    let computing: () => void = () => undefined;
    const holds = new Promise<void>((resolve) => (computing = resolve));
    const slow = ca.get({
      key,
      compute: async () => {
        const seen = version;
        computing();
        await sleep(300);
        return seen;
      },
    });
    await holds;
    const watched = b.services.poller.size.keys;
    const waiter = cb.get({ key, compute: () => Promise.resolve(version) });
    // B waits on the entry's doorbell once it found the lock held.
    expect(await eventually(() => Promise.resolve(b.services.poller.size.keys > watched))).toBe(true);
    version = 2;
    await ca.invalidate({ keys: [key] });
    expect(await slow).toBe(1); // asked before the write
    expect(await waiter).toBe(2);
    expect(await ca.get({ key, compute: () => Promise.resolve(-1) })).toBe(2);
  });
});

describe('Bloom filter', () => {
  it('has every item added, and a false-positive rate near its target', async () => {
    const { services } = startTestServices();
    const filter = services.caches.filter({ name: uniqueName('bf').replace(/\d/g, 'x') });
    expect(await filter.reserve({ capacity: 5000, errorRate: 0.01 })).toBe(true);
    expect(await filter.reserve({ capacity: 10, errorRate: 0.5 })).toBe(false);
    const items = Array.from({ length: 5000 }, (_, i) => `item-${i}`);
    expect((await filter.addMany({ items })).filter(Boolean).length).toBeGreaterThan(4950);
    expect((await filter.existsMany({ items })).every(Boolean)).toBe(true);
    const unknown = Array.from({ length: 20_000 }, (_, i) => `other-${i}`);
    const rate = (await filter.existsMany({ items: unknown })).filter(Boolean).length / unknown.length;
    // 200 expected at 1 %: ±35 % is over 4 standard deviations.
    expect(rate).toBeGreaterThan(0.0065);
    expect(rate).toBeLessThan(0.0135);
    const info = await filter.info();
    expect(info).toMatchObject({ ready: true });
    expect(info.filters).toHaveLength(1);
  });

  it('grows by sub-filters of twice the capacity at half the error rate, and keeps everything', async () => {
    const { services } = startTestServices();
    const filter = services.caches.filter({ name: 'growing' });
    await filter.reserve({ capacity: 500, errorRate: 0.02 });
    const items = Array.from({ length: 3000 }, (_, i) => `grown-${i}`);
    await filter.addMany({ items });
    const { filters } = await filter.info();
    expect(filters.map((f) => f.capacity)).toEqual([500, 1000, 2000]);
    expect(filters.map((f) => f.errorRate)).toEqual([0.02, 0.01, 0.005]);
    expect(filters.map((f) => f.hashes)).toEqual([6, 7, 8]);
    expect(filters[0]!.items).toBe(500);
    expect((await filter.existsMany({ items })).every(Boolean)).toBe(true);
    const unknown = Array.from({ length: 20_000 }, (_, i) => `never-${i}`);
    const rate = (await filter.existsMany({ items: unknown })).filter(Boolean).length / unknown.length;
    // The compound rate stays under the sum of the sub-filters' (3.5 %).
    expect(rate).toBeLessThan(0.035);
  });

  it('says "maybe" to everything until a fill from its source makes it ready, in one process of two', async () => {
    const KEY_PREFIX = uniquePrefix();
    const existing = Array.from({ length: 2500 }, (_, i) => `old-${i}`);
    let reads = 0;
    const source = async function* () {
      for (let i = 0; i < existing.length; i += 1000) {
        reads++;
        await sleep(10);
        yield existing.slice(i, i + 1000);
      }
    };
    const [fa, fb] = [startTestServices({ KEY_PREFIX }), startTestServices({ KEY_PREFIX })].map((p) =>
      p.services.caches.filter({ name: 'filled', source }),
    );
    expect(await fa!.exists({ item: 'never-there' })).toBe(true); // not ready: starts the fill
    await Promise.all([fa!.fill(), fb!.fill()]);
    expect(reads).toBe(3); // one process read the source
    expect((await fb!.existsMany({ items: existing })).every(Boolean)).toBe(true);
    const unknown = Array.from({ length: 1000 }, (_, i) => `new-${i}`);
    expect((await fb!.existsMany({ items: unknown })).filter(Boolean).length).toBeLessThan(40);
  });
});
