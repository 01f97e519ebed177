/**
 * Locks and scheduled messages across a Sentinel failover. With REDIS_WAIT_REPLICAS=1 a lock is taken only once the
 * replica has it (a take it does not confirm in time is given back), so after the master's death the lock is still its
 * holder's and no one else gets it; with 0, a lock taken while the replica was cut off dies with the master: a second
 * holder gets it, with the same fencing token, and the first learns it lost the lease at its next extension. A
 * scheduled message due while there is no master is sent once the new one answers, and only once. The master's death
 * follows a cut replication link (support/failover.ts): what a network partition does, on one machine. The groups
 * with REDIS_WAIT_REPLICAS=1 have two replicas, so that one is left to confirm writes after the failover (with none,
 * every lock write waits out REDIS_WAIT_TIMEOUT_MS and a lock can be neither taken nor kept: README, High
 * availability).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { Lease, LockService } from '../../src/services/coordination/locks.js';
import { startWorker } from '../../src/worker/start.js';
import { eventually, startTestApp, type TestApp } from '../support/app.js';
import { CHAT, MESSAGE_ADDED, createChat, record } from '../support/chats.js';
import { afterOutage, cutReplicas, sentinelEnv } from '../support/failover.js';
import { startSentinelGroups, type SentinelGroup } from '../support/redis-servers.js';

const LEASE_MS = 9000; // extended every 3 s: longer than the failover's outage (about 3-4 s here)

/** Holds lock `name` with `withLock` until `release()`: its lease once taken, and its signal. */
function hold(locks: LockService, name: string) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let signal: AbortSignal | undefined;
  const taken = new Promise<Lease>((resolve) => {
    void locks
      .withLock({ name, leaseMs: LEASE_MS }, async (s, lease) => {
        signal = s;
        resolve(lease);
        await released;
      })
      .catch(() => undefined); // a lost lease rejects nothing here: the signal says it
  });
  return { taken, release, signal: () => signal! };
}

/** The groups of the three parts below, started together before the first: two replicas for WAIT 1, one for 0. */
let groups: SentinelGroup[] = [];
if (inject('redis').kind === 'standalone') {
  beforeAll(async () => {
    groups = await startSentinelGroups([{ replicas: 2 }, { replicas: 1 }, { replicas: 2 }]);
  }, 60_000);
  afterAll(() => Promise.all(groups.map((g) => g.stop())));
}

/** Two apps on `group` (two gateways, one keyspace) with `env`. */
async function twoApps(group: SentinelGroup, env: Record<string, string>): Promise<[TestApp, TestApp]> {
  const first = await startTestApp(sentinelEnv(group, env));
  return [first, await startTestApp(sentinelEnv(group, { ...env, KEY_PREFIX: first.config.keyPrefix }))];
}

describe.runIf(inject('redis').kind === 'standalone')('a lock across a failover, REDIS_WAIT_REPLICAS=1', () => {
  let group: SentinelGroup;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    group = groups[0]!;
    [a, b] = await twoApps(group, { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '5000' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('gives back a take or a hand-over the replicas do not confirm in time, and reports them', async () => {
    const impatient = await startTestApp(
      sentinelEnv(group, { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '200', KEY_PREFIX: a.config.keyPrefix }),
    );
    const { locks, replicated } = impatient.app.services;
    const [master, ...replicas] = group.servers;
    let resume = await cutReplicas(master!, replicas);
    try {
      expect(await locks.acquire({ name: 'unconfirmed', leaseMs: LEASE_MS })).toBeNull();
      expect(replicated.short).toBe(1);
    } finally {
      resume();
    }
    // Given back: once the replicas are back, anyone takes it at once.
    const lease = await b.app.services.locks.acquire({ name: 'unconfirmed', leaseMs: LEASE_MS });
    expect(lease).not.toBeNull();
    await b.app.services.locks.release(lease!);

    // A hand-over to a waiter of the same process is given back too; the waiter tries again until one is confirmed.
    const held = (await locks.acquire({ name: 'handed', leaseMs: LEASE_MS }))!;
    let got: Lease | null | undefined;
    const waiter = locks.acquire({ name: 'handed', leaseMs: LEASE_MS, waitMs: 20_000 }).then((l) => (got = l));
    await new Promise((r) => setTimeout(r, 100)); // it waits
    resume = await cutReplicas(master!, replicas);
    try {
      expect(await locks.release(held)).toBe(true); // the holder's part is done either way
      await new Promise((r) => setTimeout(r, 1000));
      expect(got).toBeUndefined();
      expect(replicated.short).toBeGreaterThanOrEqual(3); // the hand-over, and the waiter's own tries since
    } finally {
      resume();
    }
    await waiter;
    expect(got).not.toBeNull();
    await locks.release(got!);
  });

  it("stays its holder's when the master dies: no one else takes it, and its extensions go on", async () => {
    const [master, ...replicas] = group.servers;
    const resume = await cutReplicas(master!, replicas);
    const holder = hold(a.app.services.locks, 'across');
    // Not taken while the replica cannot confirm it.
    const early = await Promise.race([holder.taken, new Promise((r) => setTimeout(() => r('waiting'), 500))]);
    expect(early).toBe('waiting');
    resume();
    const lease = await holder.taken;
    const fence = (await a.app.services.locks.fence(lease))!; // confirmed by the replica, as the take was
    await master!.stop(); // SIGKILL, the moment the take and its fencing token are acknowledged

    // Once the promoted replica answers, the lock is still held; it stays held across the holder's extensions.
    expect(await afterOutage(() => b.app.services.locks.acquire({ name: 'across', leaseMs: LEASE_MS }))).toBeNull();
    await new Promise((r) => setTimeout(r, LEASE_MS / 3 + 500));
    expect(await b.app.services.locks.acquire({ name: 'across', leaseMs: LEASE_MS })).toBeNull();
    expect(holder.signal().aborted).toBe(false);

    holder.release();
    // The release and the next take wait for the replica left, which follows the new master only once the Sentinels
    // have told it to: a while on a loaded machine.
    const next = await b.app.services.locks.acquire({ name: 'across', leaseMs: LEASE_MS, waitMs: 20_000 });
    expect(await b.app.services.locks.fence(next!)).toBe(fence + 1);
    await b.app.services.locks.release(next!);
  }, 60_000);
});

describe.runIf(inject('redis').kind === 'standalone')('a lock across a failover, REDIS_WAIT_REPLICAS=0', () => {
  let group: SentinelGroup;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    group = groups[1]!;
    [a, b] = await twoApps(group, { REDIS_WAIT_REPLICAS: '0' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('can be taken again after the master dies with the take uncopied; the first holder is told at its next extension', async () => {
    const [master, ...replicas] = group.servers;
    const resume = await cutReplicas(master!, replicas);
    const holder = hold(a.app.services.locks, 'lost');
    const lease = await holder.taken; // at once: nothing waits for the replica
    const fence = (await a.app.services.locks.fence(lease))!; // at once too
    await master!.stop();
    resume();

    // The promoted replica never saw the take: a second holder gets the lock, with the same fencing token (its
    // counter was lost with it), which is why this setting cannot promise one holder.
    const second = await afterOutage(() => b.app.services.locks.acquire({ name: 'lost', leaseMs: LEASE_MS }));
    expect(second).not.toBeNull();
    expect(await b.app.services.locks.fence(second!)).toBe(fence);
    const takenAt = Date.now();
    expect(await eventually(() => Promise.resolve(holder.signal().aborted), LEASE_MS)).toBe(true);
    expect(Date.now() - takenAt).toBeLessThanOrEqual(LEASE_MS / 3 + 1000);
    expect(holder.signal().reason).toMatchObject({ name: 'LeaseLostError' });
    holder.release();
    await b.app.services.locks.release(second!);
  }, 60_000);
});

describe.runIf(inject('redis').kind === 'standalone')('a scheduled message due during a failover', () => {
  let group: SentinelGroup;
  let t: TestApp;
  beforeAll(async () => {
    group = groups[2]!;
    t = await startTestApp(
      sentinelEnv(group, {
        REDIS_WAIT_REPLICAS: '1',
        REDIS_WAIT_TIMEOUT_MS: '5000',
        WORKER_HEARTBEAT_MS: '100',
        WORKER_TIMEOUT_MS: '1000',
        QUEUE_POLL_MS: '50',
        TASK_BACKOFF_MS: '200', // a send that fails while there is no master runs again soon
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  it('is sent once the new master answers, and only once', async () => {
    const worker = startWorker({ services: t.app.services, config: t.config, log: createLogger('silent') });
    try {
      const [ann, bob] = [await t.signUp(), await t.signUp()];
      const chatId = await createChat(t, ann.token, [bob.username], 'hello');
      const feed = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
      await feed.until((items) => items.length === 1);
      const sendAt = Date.now() + 1000;
      const scheduled = await t.gql<{ scheduleMessage: { id: string } }>(
        'mutation($c: ID!, $t: String!, $at: DateTime!) { scheduleMessage(chatId: $c, text: $t, sendAt: $at) { id } }',
        { c: chatId, t: 'due in the outage', at: new Date(sendAt).toISOString() },
        ann.token,
      );
      expect(scheduled.errors).toBeUndefined();
      await new Promise((r) => setTimeout(r, sendAt - 300 - Date.now()));
      await group.servers[0]!.stop(); // SIGKILL, 300 ms before it is due

      const items = await feed.until((all) => all.length === 2, 60_000);
      expect(items.map((m) => m.text)).toEqual(['hello', 'due in the outage']);
      // Whatever the worker was doing when the master died, the message is stored once and the record ends SENT (the
      // worker finishes it after the send, which subscribers may hear of first).
      const status = await afterOutage(async () => {
        const r = await t.gql<{ scheduledMessages: { status: string; message: { id: number } | null }[] }>(
          'query($c: ID!) { scheduledMessages(chatId: $c) { status message { id } } }',
          { c: chatId },
          ann.token,
        );
        if (r.data?.scheduledMessages[0]?.status !== 'SENT') throw new Error(JSON.stringify(r.errors ?? r.data));
        return r.data.scheduledMessages;
      });
      expect(status).toEqual([{ status: 'SENT', message: { id: 2 } }]);
      await new Promise((r) => setTimeout(r, 2000)); // a second send, if any, would have come by now
      const stored = await t.gql<{ chat: { messages: { text: string }[] } }>(CHAT, { c: chatId }, bob.token);
      expect(stored.data!.chat.messages.map((m) => m.text)).toEqual(['hello', 'due in the outage']);
      expect(feed.items).toHaveLength(2);
    } finally {
      await worker.stop(1000);
    }
  }, 90_000);
});
