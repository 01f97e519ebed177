/**
 * Reentrant locks on real Redis (Redisson's RLock): the same owner enters again with a depth one higher and the
 * same fencing token, leaves as many times before the lock is free, another owner is refused and waits on the
 * doorbell; withLock nests, keeps the lease alive and signals its loss.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/services/coordination/locks.js';
import { isBusy, isLease, type ReentrantLease } from '../../src/services/coordination/reentrant.js';
import { keysOf } from '../support/keys.js';
import { eventually, startTestApp, uniqueName, type TestApp } from '../support/app.js';
import { monitorKey } from './monitor.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

const held = (lease: unknown): ReentrantLease => {
  if (!isLease(lease)) throw new Error(`expected a lease, got ${JSON.stringify(lease)}`);
  return lease;
};

/**
 * What the releases of lock `key` gave their scripts (MONITOR), in order: a token, or the lock's whole value.
 * `settled` waits until `count` more were seen.
 */
async function scriptsOn(key: string) {
  const monitor = await monitorKey(t.redis, key);
  // The release scripts are the only ones on the lock's key alone with one argument (the lock's key is its
  // doorbell's name too); acquire, extend and fence take more.
  const releases = () =>
    monitor
      .seen()
      .filter(({ args, lua }) => !lua && /^eval(sha)?$/i.test(args[0]!) && args[2] === '1' && args.length === 5)
      .map(({ args }) => args[4]!);
  let taken = 0;
  const settled = async (count: number) => {
    await eventually(() => Promise.resolve(releases().length >= taken + count));
    const next = releases().slice(taken);
    taken += next.length;
    return next;
  };
  return { settled };
}

describe('reentrant locks', () => {
  it('reentrant: the same owner enters again (depth + 1, same token and fence), free only at depth 0', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('depth');
    const first = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(first.depth).toBe(1);
    const fence = await locks.fence(first);
    expect(fence).toBeGreaterThan(0);
    const second = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(second).toMatchObject({ depth: 2, token: first.token });
    expect(await locks.fence(second)).toBe(fence); // asked again, at any depth: the same
    const other = await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 });
    expect(isBusy(other) && other.holder).toBe('alice');
    expect(await locks.release(second)).toBe(1); // one level left: still alice's
    expect(isBusy(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 }))).toBe(true);
    expect(await locks.release(first)).toBe(0); // free
    expect(await locks.release(first)).toBe(-1); // a release too many changes nothing
    const bob = held(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 }));
    expect(bob.depth).toBe(1);
    expect(await locks.fence(first)).toBeNull(); // alice's lease ended: no token for it
    expect(await locks.fence(bob)).toBe(fence! + 1); // a new holder: the next fencing token
    expect(bob.token).not.toBe(first.token);
    expect(await locks.release(first)).toBe(-1); // alice's old token is stale: bob keeps it
    expect(await locks.release(bob)).toBe(0);
  });

  it("reentrant: another owner's release and extend with a stale token are refused; a re-entry never shortens the lease", async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('stale');
    const stale = held(await locks.acquire({ name, owner: 'alice', leaseMs: 100 }));
    const staleFence = await locks.fence(stale);
    const next = held(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000, waitMs: 10_000 })); // once it expired
    expect(await locks.fence(next)).toBeGreaterThan(staleFence!);
    expect(await locks.extend({ lease: stale, leaseMs: 10_000 })).toBe('ended');
    expect(await locks.release(stale)).toBe(-1);
    const again = held(await locks.acquire({ name, owner: 'bob', leaseMs: 50 }));
    expect(again.depth).toBe(2);
    expect(again.leftMs).toBeGreaterThan(50); // kept the longer lease it had
    expect(await locks.extend({ lease: next, leaseMs: 10_000 })).toBe('extended');
    expect(await locks.release(next)).toBe(1);
    expect(await locks.release(next)).toBe(0);
  });

  it("reentrant: a waiter wakes on the holder's last release, not its first, long before the lease ends", async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('wake');
    const outer = held(await locks.acquire({ name, owner: 'alice', leaseMs: 30_000 }));
    const inner = held(await locks.acquire({ name, owner: 'alice', leaseMs: 30_000 }));
    const fence = await locks.fence(outer);
    const watched = t.app.services.poller.size.keys;
    let woke = false;
    const waiting = locks.acquire({ name, owner: 'bob', leaseMs: 1000, waitMs: 20_000 }).then((r) => {
      woke = true;
      return r;
    });
    expect(await eventually(() => Promise.resolve(t.app.services.poller.size.keys > watched))).toBe(true);
    // The waiter registered itself on the lock: its value carries the mark.
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    expect(await eventually(async () => (await t.redis.get(key))!.endsWith('+'))).toBe(true);
    expect(await locks.release(inner)).toBe(1);
    await sleep(100);
    expect(woke).toBe(false); // still alice's at depth 1
    expect(await locks.release(outer)).toBe(0);
    const bob = held(await waiting); // its wait (20 s) is shorter than alice's lease (30 s): the release woke it
    expect(await locks.fence(bob)).toBe(fence! + 1);
    expect(await locks.release(bob)).toBe(0);
  });

  it('reentrant: withLock nests, keeps the lease alive, leaves once per call, and signals a lost lease', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('with');
    const result = await locks.withLock({ name, owner: 'job', leaseMs: 300 }, async (_signal, outer) =>
      locks.withLock({ name, owner: 'job', leaseMs: 300 }, async (signal, inner) => {
        expect(inner.depth).toBe(2);
        expect(await locks.fence(inner)).toBe(await locks.fence(outer));
        await sleep(1000); // more than three leases
        expect(signal.aborted).toBe(false);
        expect(isBusy(await locks.acquire({ name, owner: 'other', leaseMs: 100 }))).toBe(true);
        return 42;
      }),
    );
    expect(result).toBe(42);
    const after = held(await locks.acquire({ name, owner: 'other', leaseMs: 1000 }));
    expect(await locks.release(after)).toBe(0);

    let reason: unknown;
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    await locks.withLock({ name, owner: 'job', leaseMs: 300 }, async (signal) => {
      // Another party takes the lock over (as after a pause longer than the lease).
      await t.redis.set(key, 'someone-else token 1 99');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      reason = signal.reason;
    });
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(await t.redis.get(key)).toBe('someone-else token 1 99'); // not released by the loser
    await expect(
      locks.withLock({ name, owner: 'job', leaseMs: 300, waitMs: 50 }, () => Promise.resolve()),
    ).rejects.toMatchObject({ code: 'BUSY' });
  });

  it('reentrant: a free lock is taken as "<owner> <token> 1 0", and the fencing token is drawn once, on demand', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('plain');
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const lease = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(await t.redis.get(key)).toBe(`alice ${lease.token} 1 0`);
    const fence = await locks.fence(lease);
    expect(await t.redis.get(key)).toBe(`alice ${lease.token} 1 ${fence}`);
    expect(await t.redis.pttl(key)).toBeGreaterThan(5000); // drawing it kept the lease
    expect(await locks.fence(lease)).toBe(fence);
    expect(await locks.release(lease)).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
  });

  it("reentrant: the holding process's last release at depth 1 frees the lock by its whole value in one step, fence drawn or not", async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('last');
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const scripts = await scriptsOn(key);
    const plain = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    const inner = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 })); // counted here
    expect(await locks.release(inner)).toBe(1);
    expect(await locks.release(plain)).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
    expect(await scripts.settled(1)).toEqual([`alice ${plain.token} 1 0`]); // one script: the release by value

    const fenced = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    const fence = await locks.fence(fenced);
    expect(await locks.release(fenced)).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
    expect(await scripts.settled(1)).toEqual([`alice ${fenced.token} 1 ${fence}`]);
  });

  it('reentrant: a last release that finds another value than its own leaves by token: after another process entered, after it drew the fence, once the lease was lost', async () => {
    const other = await startTestApp({ KEY_PREFIX: t.config.keyPrefix }); // another gateway on the same keys
    const here = t.app.services.reentrantLocks;
    const there = other.app.services.reentrantLocks;
    const name = uniqueName('fallback');
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const scripts = await scriptsOn(key);

    // Another process's entry: the lock is at depth 2, this process's release leaves one level.
    const outer = held(await here.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    const remote = held(await there.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    expect(await here.release(outer)).toBe(1);
    expect(await t.redis.get(key)).toBe(`job ${outer.token} 1 0`);
    expect(await there.release(remote)).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
    // here's release by value, then by token; there's by token (it never knew the lock at depth 1)
    expect(await scripts.settled(3)).toEqual([`job ${outer.token} 1 0`, outer.token, outer.token]);

    // Another process's fence: back at depth 1, the value has a fence this process never saw.
    const first = held(await here.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    const entered = held(await there.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    const fence = await there.fence(entered);
    expect(await there.release(entered)).toBe(1);
    expect(await t.redis.get(key)).toBe(`job ${first.token} 1 ${fence}`);
    expect(await here.release(first)).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
    // there's (by token: it knew the lock at depth 2), then here's by value and by token
    expect(await scripts.settled(3)).toEqual([first.token, `job ${first.token} 1 0`, first.token]);

    // The lease lost: ran out, and the lock taken anew by the same owner elsewhere (another token) or left free.
    const lost = held(await here.acquire({ name, owner: 'job', leaseMs: 100 }));
    await sleep(300);
    const anew = held(await there.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    expect(anew.token).not.toBe(lost.token);
    expect(await here.release(lost)).toBe(-1);
    expect(await t.redis.get(key)).toBe(`job ${anew.token} 1 0`); // untouched
    expect(await there.release(anew)).toBe(0);
    const expired = held(await here.acquire({ name, owner: 'job', leaseMs: 100 }));
    await sleep(300);
    expect(await here.release(expired)).toBe(-1);
    expect(await t.redis.exists(key)).toBe(0);
    await other.close();
  });

  it('reentrant: a re-entry in the holding process is counted there; one from another process counts in Redis, and the lock stays held until both leave', async () => {
    const other = await startTestApp({ KEY_PREFIX: t.config.keyPrefix }); // another gateway on the same keys
    const here = t.app.services.reentrantLocks;
    const there = other.app.services.reentrantLocks;
    const name = uniqueName('processes');
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const outer = held(await here.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    const inner = held(await here.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    expect(inner).toMatchObject({ depth: 2, token: outer.token });
    expect(await t.redis.get(key)).toBe(`job ${outer.token} 1 0`); // counted in this process only
    const remote = held(await there.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    expect(remote).toMatchObject({ depth: 2, token: outer.token }); // Redis counts the other process's entry
    expect(await t.redis.get(key)).toBe(`job ${outer.token} 2 0`);
    expect(await here.release(inner)).toBeGreaterThan(0);
    expect(await here.release(outer)).toBe(1); // this process's last: the other's entry is left
    expect(isBusy(await here.acquire({ name, owner: 'someone', leaseMs: 10_000 }))).toBe(true);
    // This process no longer counts the lock as its own: a new entry of the owner goes to Redis.
    const again = held(await here.acquire({ name, owner: 'job', leaseMs: 10_000 }));
    expect(again.depth).toBe(2);
    expect(await t.redis.get(key)).toBe(`job ${outer.token} 2 0`);
    expect(await there.release(remote)).toBe(1);
    expect(await here.release(again)).toBe(0);
    expect(await t.redis.exists(key)).toBe(0);
    await other.close();
  });

  it('reentrant: a re-entry goes to Redis, lengthening the lease, when less than two thirds of its leaseMs is known to be left', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('short');
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const outer = held(await locks.acquire({ name, owner: 'alice', leaseMs: 1000 }));
    const inner = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(inner.depth).toBe(2);
    expect(await t.redis.get(key)).toBe(`alice ${outer.token} 2 0`);
    expect(await t.redis.pttl(key)).toBeGreaterThan(5000);
    // The lease as this process knows it is long now: the next re-entry is counted here.
    const third = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(third.depth).toBe(3);
    expect(await t.redis.get(key)).toBe(`alice ${outer.token} 2 0`);
    expect(await locks.release(third)).toBe(2);
    expect(await locks.release(inner)).toBe(1);
    expect(await locks.release(outer)).toBe(0);
  });

  it('reentrant: a release of a re-entry counted in the process reports a lease that ran out under it, and one still held after its known end', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('expired');
    const outer = held(await locks.acquire({ name, owner: 'alice', leaseMs: 300 }));
    const inner = held(await locks.acquire({ name, owner: 'alice', leaseMs: 300 }));
    expect(inner.depth).toBe(2);
    await sleep(500); // past the lease
    expect(await locks.release(inner)).toBe(-1);
    expect(await locks.release(outer)).toBe(-1);
    const bob = held(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 }));
    expect(await locks.release(bob)).toBe(0);

    // Lengthened where this process did not see it (as by the owner's re-entry in another process): still held.
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const first = held(await locks.acquire({ name, owner: 'alice', leaseMs: 300 }));
    const second = held(await locks.acquire({ name, owner: 'alice', leaseMs: 300 }));
    await t.redis.pexpire(key, 10_000);
    await sleep(500);
    expect(await locks.release(second)).toBe(1);
    expect(await locks.release(first)).toBe(0);
  });

  it("reentrant: once the lease is lost, the owner's next acquire in the same process does not re-enter it", async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('lost');
    const key = keysOf(t.config.keyPrefix).reentrant(name).lock;
    const first = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    await t.redis.set(key, 'bob bobs-token 1 0', 'PX', 10_000); // taken over (as after a failover)
    expect(await locks.extend({ lease: first, leaseMs: 10_000 })).toBe('ended');
    const refused = await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 });
    expect(isBusy(refused) && refused.holder).toBe('bob');
    expect(await locks.release(first)).toBe(-1);
    await t.redis.del(key);
  });
});
