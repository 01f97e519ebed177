/**
 * RedLock over five independent redis-servers (standalone in both projects: RedLock is about independent masters;
 * the product's own Redis is the project's): majority and minority, validity, release on all, servers killed and
 * restarted empty (the delayed restart), and the worker's periodic jobs under it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DRIFT_FACTOR, type RedLock } from '../../src/services/coordination/redlock.js';
import { eventually, uniqueName, uniquePrefix } from '../support/app.js';
import { keysOf } from '../support/keys.js';
import { startRedlockServers, type RedlockServers } from '../support/redlock-servers.js';
import { runJobOnWorkers } from '../support/jobs.js';
import { startTestServices } from '../support/services.js';

/** REDLOCK_MAX_LEASE_MS here: the longest lease, and how long a restarted server waits before it counts. */
const MAX_LEASE_MS = 3000;

let servers: RedlockServers;
let redlock: RedLock;
let prefix: string;
let env: Record<string, string>;

/** The lock's key on server `i`: the holder's token, or null. */
const keyOn = (i: number, name: string) => servers.client(i).get(keysOf(prefix).redlock(name));
const everyKey = (name: string) => Promise.all([0, 1, 2, 3, 4].map((i) => keyOn(i, name)));
/** Until every server counts (fresh servers count once they have been up MAX_LEASE_MS). */
const allCount = () => eventually(() => Promise.resolve(redlock.servers().every((s) => s.counts)), 3 * MAX_LEASE_MS);

beforeAll(async () => {
  servers = await startRedlockServers(5);
  prefix = uniquePrefix();
  env = { KEY_PREFIX: prefix, REDLOCK_NODES: servers.urls.join(','), REDLOCK_MAX_LEASE_MS: String(MAX_LEASE_MS) };
  redlock = startTestServices(env).services.redlock!;
  expect(await allCount()).toBe(true);
}, 60_000);

describe('RedLock', () => {
  it('RedLock takes a lock on a majority, refuses a second holder, and releases it on every server', async () => {
    const name = uniqueName('majority');
    const lease = await redlock.acquire({ name, leaseMs: 2000 });
    expect(lease).not.toBeNull();
    expect(await everyKey(name)).toEqual(Array(5).fill(lease!.token));
    expect(await redlock.acquire({ name, leaseMs: 2000 })).toBeNull();
    expect(await redlock.release(lease!)).toBe(true);
    expect(await everyKey(name)).toEqual(Array(5).fill(null));
    // Freed: the next one takes it at once.
    const next = await redlock.acquire({ name, leaseMs: 2000 });
    expect(next).not.toBeNull();
    expect(await redlock.release(next!)).toBe(true);
    expect(await redlock.release(lease!)).toBe(false); // a stale holder frees nothing
  });

  it('RedLock validity is the lease less the time the attempt took and the clock drift; extended on a majority', async () => {
    const name = uniqueName('validity');
    const leaseMs = 2000;
    const before = performance.now();
    const lease = (await redlock.acquire({ name, leaseMs }))!;
    const after = performance.now();
    const drift = Math.round(leaseMs * DRIFT_FACTOR) + 2;
    expect(lease.validUntil).toBeGreaterThanOrEqual(before + leaseMs - drift);
    expect(lease.validUntil).toBeLessThanOrEqual(after + leaseMs - drift);
    // Each server's key expires with the lease, never before the validity ends.
    for (let i = 0; i < 5; i++)
      expect(await servers.client(i).pttl(keysOf(prefix).redlock(name))).toBeLessThanOrEqual(leaseMs);
    const extended = await redlock.extend({ lease, leaseMs });
    expect(extended).not.toBe('ended');
    expect(extended).not.toBe('unconfirmed');
    expect((extended as typeof lease).validUntil).toBeGreaterThan(lease.validUntil);
    // A lease longer than REDLOCK_MAX_LEASE_MS is shortened to it.
    const long = (await redlock.acquire({ name: uniqueName('long'), leaseMs: 60_000 }))!;
    expect(await servers.client(0).pttl(keysOf(prefix).redlock(long.name))).toBeLessThanOrEqual(MAX_LEASE_MS);
    // Never released: the lease runs out on every server and another takes the lock.
    const next = await redlock.acquire({ name, leaseMs: 1000, waitMs: 3 * leaseMs });
    expect(next).not.toBeNull();
    expect(await redlock.extend({ lease, leaseMs })).toBe('ended');
    await Promise.all([redlock.release(next!), redlock.release(long)]);
  });

  it('RedLock hands a released lock to a waiter of the same process, on every server in one script', async () => {
    const name = uniqueName('handover');
    /** Calls of `command` server 0 has run. */
    const calls = async (command: string) =>
      Number(
        new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await servers.client(0).info('commandstats'))?.[1] ?? 0,
      );
    const holder = (await redlock.acquire({ name, leaseMs: 2000 }))!;
    const waiting = redlock.acquire({ name, leaseMs: 2000, waitMs: 10_000 });
    // The waiter's first attempt was refused; it waits for its turn.
    expect(await eventually(() => Promise.resolve(redlock.waiters(name) === 1))).toBe(true);
    const deletes = await calls('del');
    expect(await redlock.release(holder)).toBe(true);
    const handed = await waiting;
    expect(handed).not.toBeNull();
    expect(await calls('del')).toBe(deletes); // the holder's key was not deleted: it was handed over
    expect(await everyKey(name)).toEqual(Array(5).fill(handed!.token));
    expect(await redlock.release(handed!)).toBe(true);
  });

  it('RedLock gives up with a minority and frees what the attempt took on every server', async () => {
    const name = uniqueName('minority');
    const key = keysOf(prefix).redlock(name);
    // Another holder on three servers: two yes are no majority.
    await Promise.all([2, 3, 4].map((i) => servers.client(i).set(key, 'someone-else', 'PX', 10_000)));
    expect(await redlock.acquire({ name, leaseMs: 2000 })).toBeNull();
    expect(await everyKey(name)).toEqual([null, null, 'someone-else', 'someone-else', 'someone-else']);
    // Two of three gone: the lock is free on a majority again.
    await Promise.all([3, 4].map((i) => servers.client(i).del(key)));
    const lease = await redlock.acquire({ name, leaseMs: 2000 });
    expect(lease).not.toBeNull();
    expect(await redlock.release(lease!)).toBe(true); // on the four servers it held
    expect(await everyKey(name)).toEqual([null, null, 'someone-else', null, null]);
  });

  it('RedLock is still acquired with 2 of 5 servers killed, with 3 killed not, nor with 3 restarted empty until they have been up a lease', async () => {
    await servers.kill(0);
    await servers.kill(1);
    const name = uniqueName('faults');
    const lease = await redlock.acquire({ name, leaseMs: 2000 });
    expect(lease).not.toBeNull();
    expect(await redlock.release(lease!)).toBe(true);
    await servers.kill(2);
    expect(await redlock.acquire({ name, leaseMs: 2000 })).toBeNull();
    // Back, empty: connected again, but their yes does not count until they have been up the longest lease.
    for (const i of [0, 1, 2]) await servers.restart(i);
    expect(await eventually(() => Promise.resolve(redlock.servers().every((s) => s.upMs !== undefined)), 10_000)).toBe(
      true,
    );
    expect(redlock.servers().map((s) => s.counts)).toEqual([false, false, false, true, true]);
    expect(await redlock.acquire({ name, leaseMs: 2000 })).toBeNull();
    expect(await allCount()).toBe(true);
    const later = await redlock.acquire({ name, leaseMs: 2000 });
    expect(later).not.toBeNull();
    expect(await redlock.release(later!)).toBe(true);
  });

  it('RedLock: a server restarted empty during a lease does not give a second holder a majority (the delayed restart)', async () => {
    const name = uniqueName('restart');
    const key = keysOf(prefix).redlock(name);
    // The first holder gets exactly a majority, servers 0, 1 and 2: 3 and 4 are held by someone else meanwhile.
    await Promise.all([3, 4].map((i) => servers.client(i).set(key, 'someone-else', 'PX', 10_000)));
    const first = (await redlock.acquire({ name, leaseMs: MAX_LEASE_MS }))!;
    expect(first).not.toBeNull();
    await Promise.all([3, 4].map((i) => servers.client(i).del(key)));
    // Server 2 dies and comes back at once without its keys: it forgot the first holder's lease.
    await servers.kill(2);
    await servers.restart(2);
    expect(await eventually(() => Promise.resolve(redlock.servers()[2]!.upMs !== undefined), 10_000)).toBe(true);
    expect(await keyOn(2, name)).toBeNull();
    // Servers 2, 3 and 4 would all say yes; 2 does not count yet, so two yes are no majority.
    const second = await redlock.acquire({ name, leaseMs: MAX_LEASE_MS });
    const answeredAt = performance.now();
    expect(second).toBeNull();
    expect(answeredAt).toBeLessThan(first.validUntil); // (the first lease was still valid: a real second holder)
    // Once the first lease is over (its keys expired on 0 and 1), the second takes the lock: never both at once.
    const later = await redlock.acquire({ name, leaseMs: MAX_LEASE_MS, waitMs: 4 * MAX_LEASE_MS });
    expect(later).not.toBeNull();
    expect(performance.now()).toBeGreaterThan(first.validUntil);
    await redlock.release(later!);
  });

  it("RedLock runs a worker's periodic job on one worker at a time across two workers with REDLOCK_NODES set", async () => {
    // Two processes' worth: each its own services, with its own connections to the RedLock servers.
    const { enough, most, seen } = await runJobOnWorkers(
      [1, 2].map(() => startTestServices(env).services),
      {
        during: (job) => keyOn(0, `job:${job}`), // the lock is RedLock's, on its servers
        timeoutMs: 20_000,
      },
    );
    expect(enough).toBe(true);
    expect(most).toBe(1);
    expect(seen.every((token) => token !== null)).toBe(true);
  });
});

describe('RedLock configuration', () => {
  it('RedLock wants at least three servers, or none', () => {
    expect(() => loadConfig({ REDLOCK_NODES: 'redis://a:1,redis://b:2' })).toThrow(/REDLOCK_NODES: at least three/);
    expect(() => loadConfig({ REDLOCK_NODES: 'redis://a:1,redis://a:1,redis://b:2' })).toThrow(/vote twice/);
    expect(loadConfig({ REDLOCK_NODES: 'redis://a:1,redis://b:2,redis://c:3' }).redlock.nodes).toHaveLength(3);
  });
});
