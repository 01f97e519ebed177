/**
 * Locks and semaphores on real Redis: the book's tests, leases that expire, fencing tokens, withLock losing its
 * lease, and several processes contending (a plain GET/SET counter under the lock; a semaphore of 3).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import { HANDOFF_MAX, LeaseLostError } from '../../src/services/coordination/locks.js';
import { eventually, redisEnv, startTestApp, uniqueName, until, type TestApp } from '../support/app.js';
import { runEntry } from '../support/entries.js';
import { startStandalone } from '../support/redis-servers.js';
import { startTestServices } from '../support/services.js';
import { LEASE_MS, WAIT_MS, takeTurns } from './lock-waiters.js';
import { monitorKey } from './monitor.js';
import { WATCH_LINGER_MS } from '../../src/services/coordination/lock-waits.js';

let t: TestApp;
/**
 * Services whose poller reads a watched lock only when its doorbell rings (the audit, which would also find a
 * release that rang for nobody, comes once an hour): a waiter that no ring wakes waits out its wait.
 */
let UNAUDITED: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  UNAUDITED = { KEY_PREFIX: t.config.keyPrefix, POLL_AUDIT_MS: '3600000' };
});

describe('locks', () => {
  it("passes the book's test: a held lock refuses, frees itself when its lease ends, and releases", async () => {
    const locks = t.app.services.locks;
    const name = uniqueName('book');
    const first = await locks.acquire({ name, leaseMs: 1000 });
    expect(first).not.toBeNull();
    expect(await locks.acquire({ name, leaseMs: 1000, waitMs: 10 })).toBeNull();
    // Never released: the lock frees itself when the lease ends, which a waiter notices.
    const second = await locks.acquire({ name, leaseMs: 1000, waitMs: 5000 });
    expect(second).not.toBeNull();
    expect(await locks.release(second!)).toBe(true);
    const third = await locks.acquire({ name, leaseMs: 1000 });
    expect(third).not.toBeNull();
    expect(await locks.release(third!)).toBe(true);
  });

  it('refuses extend, release and a fencing token to a holder whose lease ended, whose token is lower than the next', async () => {
    const locks = t.app.services.locks;
    const name = uniqueName('fence');
    const stale = (await locks.acquire({ name, leaseMs: 100 }))!;
    const staleFence = (await locks.fence(stale))!;
    expect(staleFence).toBeGreaterThan(0);
    const next = (await locks.acquire({ name, leaseMs: 5000, waitMs: 5000 }))!; // once the stale lease ended
    expect(next).not.toBeNull();
    expect(await locks.fence(next)).toBeGreaterThan(staleFence);
    expect(await locks.fence(stale)).toBeNull();
    expect(await locks.extend({ lease: stale, leaseMs: 5000 })).toBe('ended');
    expect(await locks.release(stale)).toBe(false);
    // The stale holder changed nothing: the next one still holds the lock.
    expect(await locks.acquire({ name, leaseMs: 1000 })).toBeNull();
    expect(await locks.extend({ lease: next, leaseMs: 5000 })).toBe('extended');
    expect(await locks.release(next)).toBe(true);
  });

  it('wakes a waiter when the holder releases, long before the lease would end', async () => {
    const locks = t.app.services.locks;
    const name = uniqueName('wake');
    const holder = (await locks.acquire({ name, leaseMs: 30_000 }))!;
    // It waits less than the holder's lease: only the release can let it in.
    const watched = t.app.services.poller.size.keys;
    const waiting = locks.acquire({ name, leaseMs: 1000, waitMs: 20_000 });
    // Released once the waiter has tried and watches the lock for its release.
    expect(await eventually(() => Promise.resolve(t.app.services.poller.size.keys > watched))).toBe(true);
    const holderFence = (await locks.fence(holder))!;
    await locks.release(holder);
    const got = await waiting;
    expect(got).not.toBeNull();
    expect(await locks.fence(got!)).toBe(holderFence + 1);
    await locks.release(got!);
  });

  it('gives a waiter whose wait ends during a hand-over the lock handed to it', async () => {
    // A Redis of its own, its writes paused for a moment (CLIENT PAUSE WRITE) while the holder hands the lock over.
    const server = await startStandalone();
    try {
      const { services, redis } = startTestServices({}, undefined, server.target);
      const locks = services.locks;
      const name = uniqueName('handed');
      const holder = (await locks.acquire({ name, leaseMs: 30_000 }))!;
      const waiter = locks.acquire({ name, leaseMs: 30_000, waitMs: 1000 });
      await until(() => Promise.resolve(services.poller.size.keys > 0));
      await sleep(200); // queued (again, after the watch's first read woke it), its wait ending within 800 ms
      await redis.call('CLIENT', 'PAUSE', '2000', 'WRITE');
      // Handed to the waiter, whose wait ends while the hand-over's script waits for the pause to end.
      expect(await locks.release(holder)).toBe(true);
      const got = await waiter;
      expect(got).not.toBeNull(); // before the fix: null, and the lock held by nobody until its lease ended
      expect(await locks.release(got!)).toBe(true);
      expect(await locks.acquire({ name, leaseMs: 1000 })).not.toBeNull();
    } finally {
      await server.stop();
    }
  });

  it('runs its scripts on a server that lost them (SCRIPT FLUSH): NOSCRIPT, then the script sent whole', async () => {
    const server = await startStandalone();
    try {
      const { services, redis } = startTestServices({}, undefined, server.target);
      const name = uniqueName('flushed');
      for (let i = 0; i < 2; i++) {
        await redis.call('SCRIPT', 'FLUSH');
        const lease = (await services.locks.acquire({ name, leaseMs: 30_000 }))!;
        expect(await services.locks.extend({ lease, leaseMs: 30_000 })).toBe('extended'); // extendLock.lua
        expect(await services.locks.release(lease)).toBe(true); // releaseLock.lua
        expect(await services.locks.release(lease)).toBe(false);
      }
    } finally {
      await server.stop();
    }
  });

  it('withLock extends the lease while its function runs, and releases after', async () => {
    const locks = t.app.services.locks;
    const name = uniqueName('long');
    const result = await locks.withLock({ name, leaseMs: 300 }, async (signal) => {
      await sleep(1000); // more than three leases
      expect(signal.aborted).toBe(false);
      expect(await locks.acquire({ name, leaseMs: 100 })).toBeNull();
      return 42;
    });
    expect(result).toBe(42);
    const after = await locks.acquire({ name, leaseMs: 100 });
    expect(after).not.toBeNull();
    await locks.release(after!);
  });

  it("withLock aborts its function's signal when the lease is lost, and BUSY when the lock stays held", async () => {
    const locks = t.app.services.locks;
    const name = uniqueName('lost');
    let reason: unknown;
    await locks.withLock({ name, leaseMs: 300 }, async (signal) => {
      // Another party takes the lock over (as after a pause longer than the lease).
      await t.redis.set(keysOf(t.config.keyPrefix).lock(name).owner, 'someone-else');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      reason = signal.reason;
    });
    expect(reason).toBeInstanceOf(LeaseLostError);
    // The lock is still the other party's: withLock did not release it.
    expect(await t.redis.get(keysOf(t.config.keyPrefix).lock(name).owner)).toBe('someone-else');
    await expect(locks.withLock({ name, leaseMs: 300, waitMs: 50 }, () => Promise.resolve())).rejects.toMatchObject({
      code: 'BUSY',
    });
  });

  it('hands the lock over within a process, yet lets a waiter of another process in', async () => {
    const name = uniqueName('handoff');
    const { services: other } = startTestServices({ KEY_PREFIX: t.config.keyPrefix }); // another process's
    // Ten local contenders take turns for as long as the other process's waiter has not got in.
    let outsiderIn = false;
    const fences: number[] = [];
    const contenders = Array.from({ length: 10 }, async () => {
      while (!outsiderIn) {
        const lease = await t.app.services.locks.acquire({ name, leaseMs: 5000, waitMs: 20_000 });
        if (!lease) continue;
        fences.push((await t.app.services.locks.fence(lease))!);
        await t.app.services.locks.release(lease);
      }
    });
    expect(await eventually(() => Promise.resolve(fences.length > 0))).toBe(true);
    const outsider = await other.locks.acquire({ name, leaseMs: 5000, waitMs: 15_000 });
    outsiderIn = true;
    expect(outsider).not.toBeNull();
    expect(fences.length).toBeGreaterThan(HANDOFF_MAX); // the local ones did hand over meanwhile
    await other.locks.release(outsider!);
    await Promise.all(contenders);
    // One holder at a time, each with the next fencing token.
    const all = [...fences, (await other.locks.fence(outsider!))!].sort((a, b) => a - b);
    expect(new Set(all).size).toBe(all.length);
  });

  it('rings the doorbell only when someone waits: an uncontended release publishes nothing', async () => {
    const locks = t.app.services.locks;
    const { services: other } = startTestServices({ KEY_PREFIX: t.config.keyPrefix }); // another process's
    const name = uniqueName('quiet');
    const rings: string[] = [];
    const stop = t.app.services.poller.listen({ channel: keysOf(t.config.keyPrefix).lock(name).bell }, (ring) =>
      rings.push(ring),
    );
    /** A release with a waiter registered (its failed acquire): the ring it sends, once heard. */
    const waitedRelease = async () => {
      const holder = (await locks.acquire({ name, leaseMs: 30_000 }))!;
      // Waits in another process (a waiter of this one would be handed the lock, no ring).
      const waiting = other.locks.acquire({ name, leaseMs: 30_000, waitMs: 20_000 });
      expect(
        await eventually(async () => (await t.redis.get(keysOf(t.config.keyPrefix).lock(name).owner))!.endsWith('+')),
      ).toBe(true);
      const heard = rings.length;
      await locks.release(holder);
      expect(await eventually(() => Promise.resolve(rings.length > heard))).toBe(true);
      const waiter = await waiting;
      expect(waiter).not.toBeNull();
      expect(await other.locks.release(waiter!)).toBe(true); // nobody waits for it: no ring
      return holder.token;
    };
    const first = await waitedRelease(); // once heard, the subscription is in place
    for (let i = 0; i < 5; i++) {
      const lease = (await locks.acquire({ name, leaseMs: 30_000 }))!;
      expect(await locks.acquire({ name, leaseMs: 30_000 })).toBeNull(); // tries once (no wait): registers nothing
      expect(await locks.release(lease)).toBe(true);
    }
    const second = await waitedRelease();
    stop();
    // Rings of one channel arrive in order: any from the releases between would come before the second.
    expect(rings.map((ring) => ring.split(' free:')[1])).toEqual([first, second]);
  });

  it('wakes every waiter of two processes within its wait, though the leases are far longer (no lost wake-up)', async () => {
    const name = uniqueName('waiters');
    const { services } = startTestServices(UNAUDITED);
    const env = { ...redisEnv(), ...UNAUDITED };
    const [here, there] = await Promise.all([
      takeTurns(services, { name, clients: 20, rounds: 10 }),
      runEntry('test/coordination/lock-waiters.ts', [name, '20', '10'], env).then((r) => {
        if (r.code !== 0) throw new Error(`lock-waiters exited with ${r.code}:\n${r.stdout}${r.stderr}`);
        return JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { fences: number[]; refused: number };
      }),
    ]);
    // A waiter left unrung would wait out its whole wait (WAIT_MS, a third of the lease) and come back empty.
    expect(WAIT_MS).toBeLessThan(LEASE_MS);
    expect(here.refused + there.refused).toBe(0);
    const fences = [...here.fences, ...there.fences];
    expect(fences).toHaveLength(400);
    expect(new Set(fences).size).toBe(400); // one holder at a time
  }, 120_000);

  it("wakes all of a process's waiters, more than it hands over in a row, when another process releases", async () => {
    const name = uniqueName('queued');
    const { services: other } = startTestServices({ KEY_PREFIX: t.config.keyPrefix }); // another process's
    const { services: here } = startTestServices(UNAUDITED);
    const holder = (await other.locks.acquire({ name, leaseMs: LEASE_MS }))!;
    const owner = keysOf(t.config.keyPrefix).lock(name).owner;
    const watched = here.poller.size.keys;
    // Each of these takes the lock, holds it a moment and releases it: the first takes it from the other
    // process's release, the next HANDOFF_MAX are handed it, and the rest must be rung for.
    const waiters = Array.from({ length: HANDOFF_MAX + 4 }, async () => {
      const lease = await here.locks.acquire({ name, leaseMs: LEASE_MS, waitMs: WAIT_MS });
      if (lease) await here.locks.release(lease);
      return lease;
    });
    expect(await eventually(async () => (await t.redis.get(owner))?.endsWith('+') ?? false)).toBe(true);
    expect(await eventually(() => Promise.resolve(here.poller.size.keys > watched))).toBe(true);
    // Past the reads that wake a waiter without a ring: the watch's first, and the poller's two when its doorbell
    // connection came up (the second a second later). Then only rings wake them.
    await sleep(1500);
    await other.locks.release(holder);
    const leases = await Promise.all(waiters);
    expect(leases.filter((lease) => lease === null)).toHaveLength(0); // none waited out its wait
    expect(await t.redis.get(owner)).toBeNull();
  }, 60_000);

  it("queues a holding process's waiters for its hand-over without a command, and wakes them when its release rings no bell", async () => {
    const name = uniqueName('handed');
    const { services: here } = startTestServices(UNAUDITED);
    const owner = keysOf(t.config.keyPrefix).lock(name).owner;
    // Past the reads that wake a waiter without a ring when the doorbell connection comes up (the second a second
    // later): then only rings, and a watch's first read, wake a waiter.
    await sleep(1500);
    // A waiter that registers in Redis makes this process watch the lock; the watch outlives it by WATCH_LINGER_MS.
    const first = (await here.locks.acquire({ name, leaseMs: LEASE_MS }))!;
    const registered = here.locks.acquire({ name, leaseMs: LEASE_MS, waitMs: WAIT_MS });
    expect(await eventually(async () => (await t.redis.get(owner))?.endsWith('+') ?? false)).toBe(true);
    expect(await here.locks.release(first)).toBe(true); // handed over
    expect(await here.locks.release((await registered)!)).toBe(true);
    await sleep(WATCH_LINGER_MS / 5); // the watch's first read is done
    const monitor = await monitorKey(t.redis, owner);
    // Taken by this process, unmarked (nobody registered); the waiters queue here for its hand-overs, HANDOFF_MAX in
    // a row, then a release that rings nothing (nobody waits elsewhere) must wake the rest: with a lease of
    // LEASE_MS and a wait of WAIT_MS, a third of it, a waiter left to the lease's end would come back empty.
    const holder = (await here.locks.acquire({ name, leaseMs: LEASE_MS }))!;
    const waiters = Array.from({ length: HANDOFF_MAX + 4 }, async () => {
      const lease = await here.locks.acquire({ name, leaseMs: LEASE_MS, waitMs: WAIT_MS });
      if (lease) expect(await here.locks.release(lease)).toBe(true);
      return lease;
    });
    expect(await here.locks.release(holder)).toBe(true);
    const leases = await Promise.all(waiters);
    expect(leases.filter((lease) => lease === null)).toHaveLength(0);
    expect(await t.redis.get(owner)).toBeNull();
    const sent = monitor.seen().filter(({ lua }) => !lua);
    // Takes: the holder's SET NX, and one acquireLock.lua (its last argument: others waiting, '0' or '1') by the
    // waiter woken after the release that rang nothing; every other waiter was handed the lock.
    expect(sent.filter(({ args }) => /^set$/i.test(args[0]!))).toHaveLength(1);
    const scripts = sent.filter(({ args }) => /^eval(sha)?$/i.test(args[0]!));
    expect(scripts.filter(({ args }) => args.length === 7 && /^[01]$/.test(args[6]!))).toHaveLength(1);
    expect(scripts).toHaveLength(1 + 1 + HANDOFF_MAX + 4); // that take, and a hand-over or a release per lease
  }, 60_000);

  it('keeps a plain GET/SET counter exact: 20 clients in 3 processes, 200 increments each', async () => {
    const outputs = await Promise.all([7, 7, 6].map((clients) => contender('lock-counter', clients, 200)));
    expect(outputs).toHaveLength(3);
    expect(await t.redis.get(`${t.config.keyPrefix}contended:{counter}`)).toBe('4000');
  }, 180_000);
});

describe('semaphores', () => {
  it("passes the book's test: three in, a fourth refused, a timed-out holder's place is given again", async () => {
    const sem = t.app.services.semaphores;
    const name = uniqueName('book');
    const holders = await Promise.all([1, 2, 3].map(() => sem.acquire({ name, limit: 3, timeoutMs: 1000 })));
    expect(holders.every((h) => h !== null)).toBe(true);
    const place = () => sem.acquire({ name, limit: 3, timeoutMs: 1000 });
    expect(await place()).toBeNull();
    // Never released: places free themselves as their holders time out.
    const late = await until(place);
    expect(await sem.release({ name, holder: late })).toBe(true);
    for (let i = 0; i < 3; i++) expect(await until(place)).not.toBeNull();
    expect(await sem.acquire({ name, limit: 3, timeoutMs: 1000 })).toBeNull();
    // The timed-out holders are gone for good.
    expect(await sem.refresh({ name, holder: holders[0]!, timeoutMs: 1000 })).toBe(false);
    expect(await sem.release({ name, holder: holders[0]! })).toBe(false);
  });

  it('keeps a refreshed holder in', async () => {
    const sem = t.app.services.semaphores;
    const name = uniqueName('refresh');
    // Refreshed every 400 ms for 1.6 s, past its first 1 s: a 600 ms margin for each refresh on a loaded machine.
    const holder = (await sem.acquire({ name, limit: 1, timeoutMs: 1000 }))!;
    for (let i = 0; i < 4; i++) {
      await sleep(400);
      expect(await sem.refresh({ name, holder: holder, timeoutMs: 1000 })).toBe(true);
    }
    expect(await sem.acquire({ name, limit: 1, timeoutMs: 400 })).toBeNull();
    expect(await sem.release({ name, holder: holder })).toBe(true);
    expect(await sem.acquire({ name, limit: 1, timeoutMs: 400 })).not.toBeNull();
  });

  it('never lets a fourth in when 3 processes share a semaphore of 3', async () => {
    const outputs = await Promise.all([1, 2, 3].map(() => contender('semaphore', 4, 300)));
    const max = Math.max(...outputs.map((o) => o.max));
    const acquired = outputs.reduce((sum, o) => sum + o.acquired, 0);
    console.log(`semaphore of 3, 12 clients in 3 processes: ${acquired} acquisitions, at most ${max} inside at once`);
    expect(max).toBe(3); // full, and never more
    expect(acquired).toBeGreaterThan(100);
  }, 120_000);
});

/** Runs test/support/contender.ts against this file's Redis and key prefix; resolves with what it printed. */
async function contender(mode: string, clients: number, count: number): Promise<{ max: number; acquired: number }> {
  const env = { ...redisEnv(), KEY_PREFIX: t.config.keyPrefix };
  const r = await runEntry('test/support/contender.ts', [mode, String(clients), String(count)], env);
  if (r.code !== 0) throw new Error(`contender ${mode} exited with ${r.code}:\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { max: number; acquired: number };
}
