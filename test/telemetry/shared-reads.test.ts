/**
 * Counters and statistics read by many dashboards at once (the `counter` and `stats` fields) go through the shared
 * cache: over two gateway processes of one deployment, one Redis read of each per interval, and a new count shows
 * once the interval (at most METRICS_FLUSH_MS: src/services/telemetry/shared-reads.ts) has passed.
 */
import { describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import {
  doorbellsSettled,
  eventually,
  recordCalls,
  startTestApp,
  uniqueName,
  uniquePrefix,
  type TestApp,
} from '../support/app.js';

const READ = `query ($name: String!, $context: String!) {
  counter(name: $name, precision: 1) { count }
  stats(context: $context, type: "AccessTime") { count sum }
}`;

interface Read {
  counter: { count: number }[];
  stats: { count: number; sum: number } | null;
}

/** Two gateways of one deployment (one key prefix), telemetry flushed every `flushMs`, and a signed-in reader. */
async function twoGateways(flushMs: number) {
  const env = { KEY_PREFIX: uniquePrefix(), METRICS_FLUSH_MS: String(flushMs) };
  const apps = [await startTestApp(env), await startTestApp(env)] as const;
  const { token } = await apps[0].signUp();
  const read = async (app: TestApp, v: { name: string; context: string }) => {
    const r = await app.gql<Read>(READ, v, token);
    expect(r.errors).toBeUndefined();
    return r.data!;
  };
  return { apps, read, prefix: env.KEY_PREFIX };
}

/**
 * Counts `n` of counter `name` (one a second, ending `from` seconds ago) and a sample of `value` in statistic
 * `context`, written at once (the gateway's flush).
 */
async function record(
  app: TestApp,
  v: { name: string; context: string },
  o: { from: number; n: number; value: number },
) {
  const { counters, stats } = app.app.services;
  const now = Date.now();
  for (let i = 0; i < o.n; i++) counters.add({ name: v.name, at: now - (o.from + i) * 1000 });
  stats.add({ context: v.context, type: 'AccessTime', value: o.value });
  await counters.flush();
  await stats.flush();
}

describe('counters and statistics read through the shared cache', () => {
  it('cost one Redis read each for 200 concurrent readers over two processes, and then none within the interval', async () => {
    // An interval far longer than the test: every read after the first is the cache's.
    const { apps, read, prefix } = await twoGateways(60_000);
    // A resync (one comes about a second after a process starts) drops what a process keeps in memory.
    await doorbellsSettled(...apps.map((a) => a.app));
    const v = { name: uniqueName('hot'), context: uniqueName('ctx') };
    // Both serve the operation (a process caches the counters and statistics it writes).
    await record(apps[0], v, { from: 0, n: 60, value: 2 });
    await record(apps[1], v, { from: 60, n: 60, value: 2 });
    const exact = {
      counter: (await apps[0].app.services.counters.samples({ name: v.name, precision: 1 })).map((s) => s.count),
      stats: await apps[0].app.services.stats.get({ context: v.context, type: 'AccessTime' }),
    };
    expect(exact.counter.reduce((a, b) => a + b, 0)).toBe(120);

    const keys = keysOf(prefix);
    const recordings = apps.map((a) => recordCalls(a.redis));
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => read(apps[i % 2]!, v)));
    const sent = recordings.flatMap((r) => r.stop());
    for (const a of answers) {
      expect(a.counter.map((s) => s.count)).toEqual(exact.counter);
      expect(a.stats).toEqual({ count: exact.stats!.count, sum: exact.stats!.sum });
    }
    // The counter's hash and the statistic's sorted set were each read once by the whole deployment.
    expect(sent.filter((c) => c.name === 'hgetall' && c.args[0] === keys.counter(v.name, 1))).toHaveLength(1);
    expect(
      sent.filter((c) => c.name === 'zrange' && c.args[0] === keys.stats(v.context, 'AccessTime').current),
    ).toHaveLength(1);
    const figures = apps.map((a) => a.app.services.caches.figures('counters'));
    expect(figures[0]!.computations + figures[1]!.computations).toBe(1);

    // New counts within the interval: readers still get the cached answer, from memory: no command names them.
    await record(apps[0], v, { from: 0, n: 5, value: 4 });
    const hits = figures.map((_f, i) => apps[i]!.app.services.caches.figures('counters').memoryHits);
    const later = apps.map((a) => recordCalls(a.redis));
    const again = await Promise.all(apps.map((a) => read(a, v)));
    const named = later
      .flatMap((r) => r.stop())
      .filter((c) => c.args.some((a) => a.includes(v.name) || a.includes(v.context)));
    expect(named).toEqual([]);
    for (const a of again) {
      expect(a.counter.map((s) => s.count)).toEqual(exact.counter);
      expect(a.stats!.count).toBe(exact.stats!.count);
    }
    apps.forEach((a, i) => expect(a.app.services.caches.figures('counters').memoryHits).toBe(hits[i]! + 1));
    // The services' own read is Redis's now.
    const now = await apps[1].app.services.counters.samples({ name: v.name, precision: 1 });
    expect(now.reduce((sum, s) => sum + s.count, 0)).toBe(125);
  });

  it('show a new count on both processes once the interval has passed', async () => {
    const { apps, read } = await twoGateways(200);
    const v = { name: uniqueName('fresh'), context: uniqueName('ctx') };
    await record(apps[0], v, { from: 0, n: 3, value: 1 });
    await record(apps[1], v, { from: 3, n: 1, value: 1 });
    const total = (r: Read) => r.counter.reduce((sum, s) => sum + s.count, 0);
    for (const app of apps) expect(total(await read(app, v))).toBe(4);
    await record(apps[1], v, { from: 0, n: 2, value: 1 });
    for (const app of apps)
      expect(
        await eventually(async () => {
          const r = await read(app, v);
          return total(r) === 6 && r.stats?.count === 3;
        }),
      ).toBe(true);
    // Both read through the cache.
    for (const app of apps) {
      const f = app.app.services.caches.figures('counters');
      expect(f.memoryHits + f.hits + f.computations + f.deploymentWaits).toBeGreaterThan(0);
    }
  });

  it('read names the process never wrote from Redis, without a cache entry, so made-up names cost what they did', async () => {
    const { apps, read, prefix } = await twoGateways(60_000);
    const v = { name: uniqueName('never'), context: uniqueName('ctx') };
    const figures = () => ['counters', 'stats'].map((c) => apps[0].app.services.caches.figures(c));
    const before = figures();
    const recording = recordCalls(apps[0].redis);
    for (let i = 0; i < 3; i++) expect(await read(apps[0], v)).toEqual({ counter: [], stats: null });
    const sent = recording.stop();
    expect(sent.filter((c) => c.name === 'hgetall' && c.args[0] === keysOf(prefix).counter(v.name, 1))).toHaveLength(3);
    expect(sent.filter((c) => c.args.some((a) => a.includes('cache:')))).toEqual([]);
    expect(figures()).toEqual(before);
    // Counted by another process only: this one reads it directly, and right.
    await record(apps[1], v, { from: 0, n: 4, value: 1 });
    const r = await read(apps[0], v);
    expect(r.counter.reduce((sum, s) => sum + s.count, 0)).toBe(4);
    expect(r.stats?.count).toBe(1);
    expect(figures()).toEqual(before);
  });
});
