/**
 * Counters, statistics and logs (the book's chapter 5) on real Redis, and the gateway counting and timing its
 * own operations without a Redis command on the request path. Time is moved through the services' clock.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { LogForward, createLogger } from '../../src/logger.js';
import type { RedisClient } from '../../src/redis/clients.js';
import type { TelemetryCommands } from '../../src/redis/telemetry/commands.js';
import { createServices, type Services } from '../../src/services/index.js';
import { hourStart } from '../../src/services/shared/clock.js';
import { gatewayLogSink } from '../../src/services/telemetry/logs.js';
import { keysOf } from '../support/keys.js';
import {
  eventually,
  prefixMemory,
  recordCommands,
  startTestApp,
  testRedis,
  uniqueName,
  uniquePrefix,
  type TestApp,
} from '../support/app.js';
import { runJobOnWorkers } from '../support/jobs.js';
import { startTestServices } from '../support/services.js';

const DAY_MS = 86_400_000;
let t: TestApp;
let redis: RedisClient;
let services: Services;
let clock = Date.now();

beforeAll(async () => {
  t = await startTestApp({ METRICS_FLUSH_MS: '60000' }); // flushed by hand
  // The services of the same deployment, on a clock the tests move.
  ({ services, redis } = startTestServices({ KEY_PREFIX: t.config.keyPrefix, METRICS_FLUSH_MS: '60000' }, () => clock));
});

describe('counters', () => {
  it("passes the book's test: 10 per-second updates, samples at 1 s and 5 s, and the cleaner empties them", async () => {
    const name = uniqueName('hits');
    const start = Math.floor(Date.now() / 5000) * 5000; // a 5 s slot boundary, so 10 s span exactly 2 slots
    for (let i = 0; i < 10; i++) services.counters.add({ name, at: start + i * 1000 });
    await services.counters.flush();
    expect((await services.counters.samples({ name, precision: 1 })).length).toBeGreaterThanOrEqual(10);
    expect((await services.counters.samples({ name, precision: 5 })).length).toBeGreaterThanOrEqual(2);
    expect(await services.counters.samples({ name, precision: 86400 })).toEqual([
      { time: new Date(Math.floor(start / DAY_MS) * DAY_MS), count: 10 },
    ]);
    expect(await services.counters.list()).toContain(name);

    // The default sample count keeps them; two days ahead with a sample count of 0, nothing is left.
    await services.counters.clean({ now: start + 20_000 });
    expect(await services.counters.samples({ name, precision: 86400 })).toHaveLength(1);
    await services.counters.clean({ sampleCount: 0, now: start + 2 * DAY_MS });
    expect(await services.counters.samples({ name, precision: 86400 })).toEqual([]);
    expect(await services.counters.samples({ name, precision: 1 })).toEqual([]);
    expect(await services.counters.list()).not.toContain(name);
  });

  // Standalone only: a Cluster client does not reconnect after disconnect() the same way; the logic is the same.
  it.runIf(inject('redis').kind === 'standalone')(
    'keeps counts gathered while Redis is unreachable for the next flush',
    async () => {
      const name = uniqueName('kept');
      const log = createLogger('silent');
      const broken = testRedis(t.config, log, 'broken');
      const offline = createServices(broken, t.config, log);
      offline.counters.add({ name, count: 3 });
      broken.disconnect();
      await expect(offline.counters.flush()).rejects.toThrow();
      await offline.poller.stop();
      // The same counts, flushed through a live client, arrive whole.
      await broken.connect();
      await offline.counters.flush();
      const samples = await services.counters.samples({ name, precision: 60 });
      expect(samples.reduce((sum, s) => sum + s.count, 0)).toBe(3);
      await offline.close();
    },
  );

  /** The counters' Redis door, whose steps a test puts another process's step between. */
  const doorOf = (s: Services) => (s.counters as unknown as { commands: TelemetryCommands }).commands;

  it("keeps a name the cleaner dropped between a flush's admission and its write: the flush admits it again", async () => {
    const name = uniqueName('raced');
    const commands = doorOf(t.app.services);
    const addCounts = commands.addCounts.bind(commands);
    // The cleaner (another process) runs once the flush has admitted the name and before it writes the counts.
    commands.addCounts = async (a) => {
      if (a.name === name) await services.counters.clean({ now: Date.now() });
      return addCounts(a);
    };
    try {
      t.app.services.counters.add({ name, count: 2 });
      await t.app.services.counters.flush();
    } finally {
      commands.addCounts = addCounts;
    }
    expect(await services.counters.list()).toContain(name);
  });

  it('keeps a name whose counts a flush wrote while the cleaner dropped it: the cleaner admits it again', async () => {
    const name = uniqueName('raced');
    const commands = doorOf(services);
    // A flush admitted the name and has not written its counts yet: the cleaner finds it empty.
    await commands.admitCounterNames({ max: t.config.metrics.namesMax, reserved: 0, names: [name] });
    const drop = commands.dropCounterName.bind(commands);
    // Before the cleaner's drop, the flush writes its counts and admits the name again.
    commands.dropCounterName = async (a) => {
      if (a.name === name) {
        t.app.services.counters.add({ name, count: 2 });
        await t.app.services.counters.flush();
      }
      return drop(a);
    };
    try {
      await services.counters.clean({ now: Date.now() });
    } finally {
      commands.dropCounterName = drop;
    }
    expect(await services.counters.list()).toContain(name);
  });
});

describe('statistics', () => {
  it("passes the book's test: 5, 10 and 15 average 10 with a standard deviation of 5; the hour rotates", async () => {
    const context = uniqueName('ctx');
    clock = hourStart(Date.now()) + 1_800_000; // in this hour: statistics of an hour over two hours ago expire at once
    for (const v of [5, 10, 15]) services.stats.add({ context, type: 'AccessTime', value: v });
    await services.stats.flush();
    expect(await services.stats.get({ context, type: 'AccessTime' })).toEqual({
      count: 3,
      sum: 30,
      min: 5,
      max: 15,
      average: 10,
      stddev: 5,
    });

    // An hour later the current statistic starts again; the previous hour's is kept.
    clock += 3_600_000;
    services.stats.add({ context, type: 'AccessTime', value: 2 });
    await services.stats.flush();
    expect(await services.stats.get({ context, type: 'AccessTime' })).toMatchObject({ count: 1, sum: 2, average: 2 });
    expect(await redis.zscore(keysOf(t.config.keyPrefix).stats(context, 'AccessTime').last, 'count')).toBe('3');
    clock = Date.now();
  });
});

describe('logs', () => {
  it("passes the book's tests: five recent lines newest first; common messages counted 1 to 5", async () => {
    const name = uniqueName('log');
    for (let i = 1; i <= 5; i++) services.logs.log({ name, severity: 'INFO', message: `line ${i}` });
    for (let i = 1; i <= 5; i++)
      for (let n = 0; n < i; n++) services.logs.log({ name, severity: 'ERROR', message: `message ${i}` });
    await services.logs.flush();
    const recent = await services.logs.recent({ name, severity: 'INFO', first: 100 });
    expect(recent.map((line) => line.replace(/^\S+ /, ''))).toEqual(['line 5', 'line 4', 'line 3', 'line 2', 'line 1']);
    expect(await services.logs.common({ name, severity: 'ERROR', first: 20 })).toEqual(
      [5, 4, 3, 2, 1].map((i) => ({ message: `message ${i}`, count: i })),
    );
  });

  it("sends the process's warnings and errors to the gateway log, which admins read", async () => {
    const forward = new LogForward();
    const log = createLogger('warn', forward);
    const marker = uniqueName('odd');
    const sink = gatewayLogSink(services.logs);
    let forwarded = 0;
    forward.attach((level, message) => {
      sink(level, message);
      if (message.startsWith(marker)) forwarded++;
    });
    log.info(`${marker} info is not forwarded`);
    log.warn(`${marker} warned`);
    log.error({ detail: 1 }, `${marker} failed`);
    // pino's multistream may hand the lines on after the calls return: wait until both reached the sink.
    expect(await eventually(() => Promise.resolve(forwarded === 2))).toBe(true);
    await services.logs.flush();
    const admin = await t.signUp('admin');
    const read = (severity: string) =>
      t.gql<{ recentLogs: string[] }>(
        'query($s: LogSeverity) { recentLogs(name: "gateway", severity: $s, first: 100) }',
        { s: severity },
        admin.token,
      );
    expect((await read('WARNING')).data!.recentLogs.some((l) => l.endsWith(`${marker} warned`))).toBe(true);
    expect((await read('ERROR')).data!.recentLogs.some((l) => l.endsWith(`${marker} failed`))).toBe(true);
    expect((await read('INFO')).data!.recentLogs.some((l) => l.includes(marker))).toBe(false);
    const common = await t.gql<{ commonLogs: { message: string; count: number }[] }>(
      '{ commonLogs(name: "gateway", severity: WARNING) { message count } }',
      {},
      admin.token,
    );
    expect(common.data!.commonLogs).toContainEqual({ message: `${marker} warned`, count: 1 });
    const user = await t.signUp();
    expect((await t.gql('{ recentLogs(name: "gateway") }', {}, user.token)).errors?.[0]?.extensions?.code).toBe(
      'FORBIDDEN',
    );
  });
});

describe('operations', () => {
  it('are counted and timed, and the request path sends no counter or statistics command to Redis', async () => {
    const me = await t.signUp();
    await t.app.services.metrics.flush();
    const recording = recordCommands(t.redis);
    let sent: string[];
    try {
      for (let i = 0; i < 3; i++)
        expect((await t.gql('query WhoAmI { me { username } }', {}, me.token)).errors).toBeUndefined();
    } finally {
      sent = recording.stop();
    }
    expect(sent).toContain('getex'); // the first session lookup (the process caches it)
    expect(sent.filter((name) => !['getex', 'get', 'hget', 'hgetall', 'hmget'].includes(name))).toEqual([]);

    await t.app.services.metrics.flush();
    const r = await t.gql<{
      counter: { count: number }[];
      stats: { count: number; average: number } | null;
      slowestOperations: { name: string }[];
      counters: string[];
    }>(
      '{ counter(name: "WhoAmI", precision: 86400) { count } stats(context: "WhoAmI", type: "AccessTime") { count average } slowestOperations(first: 100) { name } counters }',
      {},
      me.token,
    );
    expect(r.errors).toBeUndefined();
    expect(r.data!.counter.reduce((sum, s) => sum + s.count, 0)).toBe(3);
    expect(r.data!.stats).toMatchObject({ count: 3 });
    expect(r.data!.stats!.average).toBeGreaterThan(0);
    expect(r.data!.slowestOperations.map((s) => s.name)).toContain('WhoAmI');
    expect(r.data!.counters).toEqual(expect.arrayContaining(['WhoAmI', 'anonymous'])); // signUp's mutation had no name
  });

  it('refuses bad arguments and strangers', async () => {
    const me = await t.signUp();
    const code = async (query: string, token?: string) => (await t.gql(query, {}, token)).errors?.[0]?.extensions?.code;
    expect(await code('{ counter(name: "x", precision: 7) { count } }', me.token)).toBe('BAD_USER_INPUT');
    expect(await code('{ counter(name: "a{b}", precision: 1) { count } }', me.token)).toBe('BAD_USER_INPUT');
    expect(await code('{ stats(context: "", type: "AccessTime") { count } }', me.token)).toBe('BAD_USER_INPUT');
    expect(await code('{ slowestOperations(first: 101) { name } }', me.token)).toBe('BAD_USER_INPUT');
    expect(await code('{ counters }')).toBe('UNAUTHENTICATED');
    expect(await code('{ commonLogs(name: "gateway") { count } }', me.token)).toBe('FORBIDDEN');
    expect((await t.gql('{ stats(context: "never", type: "AccessTime") { count } }', {}, me.token)).data).toEqual({
      stats: null,
    });
  });
});

describe('telemetry bounded against hostile operation names', () => {
  /** Runs `query <name> { __typename }` anonymously for each name, spread over the apps, 50 at a time. */
  async function operate(apps: TestApp[], names: string[]): Promise<void> {
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map(async (name, j) => {
          const r = await apps[(i + j) % apps.length]!.gql(`query ${name} { __typename }`);
          expect(r.errors).toBeUndefined();
        }),
      );
    }
    for (const app of apps) await app.app.services.metrics.flush();
  }

  it('keeps Redis and counters bounded when 2,000 distinct names come through two processes', async () => {
    const env = { KEY_PREFIX: uniquePrefix(), METRICS_NAMES_MAX: '100', METRICS_FLUSH_MS: '60000' };
    const apps = [await startTestApp(env), await startTestApp(env)];
    try {
      const stem = uniqueName('op');
      await operate(
        apps,
        Array.from({ length: 100 }, (_, i) => `${stem}_${i}`),
      );
      const atCap = await prefixMemory(apps[0]!.redis, env.KEY_PREFIX);
      await operate(
        apps,
        Array.from({ length: 1900 }, (_, i) => `${stem}_${i + 100}`),
      );
      const after = await prefixMemory(apps[0]!.redis, env.KEY_PREFIX);
      // A name over 64 characters, or of other characters, is anonymous: no key carries it.
      await operate(apps, [`x${'y'.repeat(900_000)}`, `${'z'.repeat(65)}`]);
      await apps[0]!.gql('query é_1 { __typename }');
      await apps[0]!.app.services.metrics.flush();
      const signedIn = await apps[0]!.signUp();
      const counters = (await apps[1]!.gql<{ counters: string[] }>('{ counters }', {}, signedIn.token)).data!.counters;
      console.log(
        `telemetry: 2,000 names, METRICS_NAMES_MAX 100: ${atCap.keys.length} keys / ${(atCap.bytes / 1024).toFixed(0)} KiB at the cap, ` +
          `${after.keys.length} keys / ${(after.bytes / 1024).toFixed(0)} KiB after 1,900 more; counters lists ${counters.length} names`,
      );
      expect(counters.length).toBeLessThanOrEqual(100);
      expect(counters).toContain('other');
      expect(counters.filter((n) => n.startsWith(stem)).length).toBeGreaterThanOrEqual(97);
      expect(after.keys.length).toBeLessThanOrEqual(atCap.keys.length + 20);
      expect(after.bytes).toBeLessThan(atCap.bytes * 1.25);
      const longest = Math.max(...(await prefixMemory(apps[0]!.redis, env.KEY_PREFIX)).keys.map((k) => k.length));
      expect(longest).toBeLessThan(150);
      // What went to `other`: the 1,900 names past the cap (at least), counted and timed.
      const other = await apps[0]!.gql<{ counter: { count: number }[]; stats: { count: number } }>(
        '{ counter(name: "other", precision: 86400) { count } stats(context: "other", type: "AccessTime") { count } }',
        {},
        signedIn.token,
      );
      expect(other.data!.counter.reduce((sum, s) => sum + s.count, 0)).toBeGreaterThanOrEqual(1900);
      expect(other.data!.stats.count).toBeGreaterThanOrEqual(1900);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
  });

  it("never lets an operation name collide with the gateway's own keys (an operation named slowest is just an operation)", async () => {
    const me = await t.signUp();
    const names = ['slowest', 'names', 'known', 'telemetry'];
    for (const name of names)
      expect((await t.gql(`query ${name} { __typename }`, {}, me.token)).errors).toBeUndefined();
    await t.app.services.metrics.flush();
    const r = await t.gql<{ slowestOperations: { name: string; averageSeconds: number }[]; stats: { count: number } }>(
      '{ slowestOperations(first: 100) { name averageSeconds } stats(context: "slowest", type: "AccessTime") { count } }',
      {},
      me.token,
    );
    const ranked = r.data!.slowestOperations.map((s) => s.name);
    expect(ranked).toEqual(expect.arrayContaining(names));
    expect(ranked).not.toContain('sumsq');
    expect(r.data!.stats.count).toBeGreaterThanOrEqual(1);
  });

  it('deletes statistics older than the previous hour', async () => {
    const context = uniqueName('aging');
    clock = Date.now();
    services.stats.add({ context, type: 'AccessTime', value: 1 });
    await services.stats.flush();
    const k = keysOf(t.config.keyPrefix).stats(context, 'AccessTime');
    const hourEnds = Math.ceil((clock + 1) / 3_600_000) * 3_600_000;
    // Kept through this hour and the next (as the previous hour), then deleted.
    for (const key of [k.current, k.start])
      expect(Math.abs((await redis.pexpiretime(key)) - (hourEnds + 3_600_000))).toBeLessThan(1000);
    // Once the hour is over, it is not this hour's statistic any more.
    clock = hourEnds;
    expect(await services.stats.get({ context, type: 'AccessTime' })).toBeNull();
    clock = Date.now();
  });
});

describe('periodic jobs', () => {
  it('run on one worker at a time', async () => {
    const { enough, most } = await runJobOnWorkers([t.app.services, t.app.services, t.app.services]);
    expect(enough).toBe(true);
    expect(most).toBe(1);
  });
});
