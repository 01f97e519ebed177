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

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

const held = (lease: unknown): ReentrantLease => {
  if (!isLease(lease)) throw new Error(`expected a lease, got ${JSON.stringify(lease)}`);
  return lease;
};

describe('reentrant locks', () => {
  it('reentrant: the same owner enters again (depth + 1, same token and fence), free only at depth 0', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('depth');
    const first = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(first.depth).toBe(1);
    const second = held(await locks.acquire({ name, owner: 'alice', leaseMs: 10_000 }));
    expect(second).toMatchObject({ depth: 2, token: first.token, fence: first.fence });
    const other = await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 });
    expect(isBusy(other) && other.holder).toBe('alice');
    expect(await locks.release(second)).toBe(1); // one level left: still alice's
    expect(isBusy(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 }))).toBe(true);
    expect(await locks.release(first)).toBe(0); // free
    expect(await locks.release(first)).toBe(-1); // a release too many changes nothing
    const bob = held(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000 }));
    expect(bob.depth).toBe(1);
    expect(Number(bob.fence)).toBe(Number(first.fence) + 1); // a new holder: the next fencing token
    expect(bob.token).not.toBe(first.token);
    expect(await locks.release(first)).toBe(-1); // alice's old token is stale: bob keeps it
    expect(await locks.release(bob)).toBe(0);
  });

  it("reentrant: another owner's release and extend with a stale token are refused; a re-entry never shortens the lease", async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('stale');
    const stale = held(await locks.acquire({ name, owner: 'alice', leaseMs: 100 }));
    const next = held(await locks.acquire({ name, owner: 'bob', leaseMs: 10_000, waitMs: 10_000 })); // once it expired
    expect(Number(next.fence)).toBeGreaterThan(Number(stale.fence));
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
    expect(Number(bob.fence)).toBe(Number(outer.fence) + 1);
    expect(await locks.release(bob)).toBe(0);
  });

  it('reentrant: withLock nests, keeps the lease alive, leaves once per call, and signals a lost lease', async () => {
    const locks = t.app.services.reentrantLocks;
    const name = uniqueName('with');
    const result = await locks.withLock({ name, owner: 'job', leaseMs: 300 }, async (_signal, outer) =>
      locks.withLock({ name, owner: 'job', leaseMs: 300 }, async (signal, inner) => {
        expect(inner.depth).toBe(2);
        expect(inner.fence).toBe(outer.fence);
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
});
