/**
 * Read-write locks on real Redis: readers share, a writer excludes, a waiting writer is not starved by a stream of
 * readers, leases end on their own (a dead reader), the loss signal, and waiters of another process woken by the
 * release. `vitest -t 'read-write'` finds them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/services/coordination/locks.js';
import type { RwLease } from '../../src/services/coordination/rwlocks.js';
import { eventually, startTestApp, uniqueName, type TestApp } from '../support/app.js';
import { keysOf } from '../support/keys.js';
import { startTestServices } from '../support/services.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

describe('read-write locks', () => {
  it('read-write: readers share the lock, and a writer is refused while any reads', async () => {
    const rw = t.app.services.rwlocks;
    const name = uniqueName('share');
    const readers = await Promise.all([1, 2, 3].map(() => rw.acquire({ name, mode: 'read', leaseMs: 10_000 })));
    expect(readers.every((r) => r !== null)).toBe(true);
    expect(new Set(readers.map((r) => r!.fence)).size).toBe(3); // each holder its own fencing token
    expect(await rw.acquire({ name, mode: 'write', leaseMs: 10_000 })).toBeNull();
    for (const r of readers.slice(0, 2)) expect(await rw.release(r!)).toBe(true);
    expect(await rw.acquire({ name, mode: 'write', leaseMs: 10_000 })).toBeNull(); // one reader is left
    expect(await rw.release(readers[2]!)).toBe(true);
    expect(await rw.release(readers[2]!)).toBe(false); // already released
    const writer = await rw.acquire({ name, mode: 'write', leaseMs: 10_000 });
    expect(writer).not.toBeNull();
    expect(writer!.fence).toBeGreaterThan(Math.max(...readers.map((r) => r!.fence)));
    await rw.release(writer!);
  });

  it('read-write: a writer excludes readers and writers, and its release lets a waiting reader of another process in', async () => {
    const rw = t.app.services.rwlocks;
    const { services: other } = startTestServices({ KEY_PREFIX: t.config.keyPrefix }); // another process's
    const name = uniqueName('exclude');
    const writer = (await rw.acquire({ name, mode: 'write', leaseMs: 60_000 }))!;
    expect(writer).not.toBeNull();
    expect(await rw.acquire({ name, mode: 'read', leaseMs: 10_000 })).toBeNull();
    expect(await rw.acquire({ name, mode: 'write', leaseMs: 10_000 })).toBeNull();
    // Three readers of the other process wait (less than the writer's lease: only its release lets them in).
    const waiting = [1, 2, 3].map(() => other.rwlocks.acquire({ name, mode: 'read', leaseMs: 10_000, waitMs: 20_000 }));
    const waited = keysOf(t.config.keyPrefix).rwlock(name).waited;
    expect(await eventually(async () => (await t.redis.exists(waited)) === 1)).toBe(true);
    expect(await rw.release(writer)).toBe(true);
    const readers = await Promise.all(waiting);
    expect(readers.every((r) => r !== null)).toBe(true); // all in together
    for (const r of readers) await other.rwlocks.release(r!);
  });

  it('read-write: a waiting writer is not starved by a stream of readers (new readers queue behind it)', async () => {
    const rw = t.app.services.rwlocks;
    const name = uniqueName('starve');
    let writerIn = false;
    let readsAfterWriterAsked = 0;
    let writerAsked = false;
    // Readers overlap, staggered: without the writer's queueing, the lock would never be free of readers.
    const stream = Array.from({ length: 5 }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, 3 * i));
      while (!writerIn) {
        const lease = await rw.acquire({ name, mode: 'read', leaseMs: 10_000, waitMs: 20_000 });
        if (!lease) continue;
        if (writerAsked && !writerIn) readsAfterWriterAsked++;
        await new Promise((resolve) => setTimeout(resolve, 15));
        await rw.release(lease);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the stream runs
    writerAsked = true;
    const writer = await rw.acquire({ name, mode: 'write', leaseMs: 10_000, waitMs: 20_000 });
    writerIn = true;
    expect(writer).not.toBeNull();
    // Readers that were already in, or had their attempt in flight as the writer registered, finish; no more.
    expect(readsAfterWriterAsked).toBeLessThanOrEqual(5);
    await rw.release(writer!);
    await Promise.all(stream);
  });

  it("read-write: a reader's lease ends on its own, and a waiting writer gets in then", async () => {
    const rw = t.app.services.rwlocks;
    const name = uniqueName('expire');
    const dead = await rw.acquire({ name, mode: 'read', leaseMs: 300 }); // never released: its holder "died"
    const alive = (await rw.acquire({ name, mode: 'read', leaseMs: 60_000 }))!;
    await rw.release(alive);
    const writer = await rw.acquire({ name, mode: 'write', leaseMs: 10_000, waitMs: 10_000 });
    expect(writer).not.toBeNull();
    expect(await rw.release(dead!)).toBe(false); // its lease had ended
    expect(await rw.extend({ lease: dead!, leaseMs: 1000 })).toBe('ended');
    expect(await rw.extend({ lease: writer!, leaseMs: 10_000 })).toBe('extended');
    await rw.release(writer!);
    // The readers' set went with its last lease.
    expect(await t.redis.exists(keysOf(t.config.keyPrefix).rwlock(name).readers)).toBe(0);
  });

  it("read-write: withLock extends a reader's lease while its function runs, and aborts the signal when it is lost", async () => {
    const rw = t.app.services.rwlocks;
    const name = uniqueName('lost');
    const readers = keysOf(t.config.keyPrefix).rwlock(name).readers;
    let reason: unknown;
    let seen: RwLease | undefined;
    // A lease of 900 ms, extended every 300 ms: a loaded machine's pauses of a few hundred ms do not end it.
    await rw.withLock({ name, mode: 'read', leaseMs: 900 }, async (signal, lease) => {
      seen = lease;
      // Outlives three leases: the extensions keep it.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(signal.aborted).toBe(false);
      expect(await t.redis.zscore(readers, lease.token)).not.toBeNull();
      await t.redis.zrem(readers, lease.token); // as if it had ended while the holder paused
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      reason = signal.reason;
    });
    expect(seen?.mode).toBe('read');
    expect(reason).toBeInstanceOf(LeaseLostError);
    const writer = (await rw.acquire({ name, mode: 'write', leaseMs: 1000 }))!;
    expect(writer).not.toBeNull();
    await expect(
      rw.withLock({ name, mode: 'read', leaseMs: 300, waitMs: 50 }, () => Promise.resolve()),
    ).rejects.toMatchObject({
      code: 'BUSY',
    });
    await rw.release(writer);
  });
});
