/**
 * High availability. A master that Sentinels watch: the gateway finds it through them and follows a failover without
 * a restart; live subscriptions keep delivering, over the doorbell of the new master. With REDIS_WAIT_REPLICAS, a
 * write is acknowledged once a replica has it, so the master's death loses nothing acknowledged. The Sentinel tests
 * run in the standalone project (they start their own master, replica and three Sentinels); the cluster project
 * checks the waits reach each slot's master.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { CHAT, MESSAGE_ADDED, createChat, record, send } from '../support/chats.js';
import { spawnGateway } from '../support/gateway-process.js';
import { afterOutage, cutReplicas, sendWhileCut, sentinelEnv, trackRenewals } from '../support/failover.js';
import { startSentinelGroups, type SentinelGroup } from '../support/redis-servers.js';

/** The groups of the two Sentinel parts below, started together before the first. */
let groups: SentinelGroup[] = [];
if (inject('redis').kind === 'standalone') {
  beforeAll(async () => {
    groups = await startSentinelGroups([{}, {}]);
  }, 60_000);
  afterAll(() => Promise.all(groups.map((g) => g.stop())));
}

describe.runIf(inject('redis').kind === 'standalone')('Redis Sentinel', () => {
  let group: SentinelGroup;
  let t: TestApp;
  beforeAll(async () => {
    group = groups[0]!;
    t = await startTestApp(sentinelEnv(group));
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  it('follows a failover: subscriptions deliver what is sent before and after, new writes succeed', async () => {
    const [ann, bob] = [await t.signUp(), await t.signUp()];
    const chatId = await createChat(t, ann.token, [bob.username], 'before');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    const sentBefore = [await send(t, ann.token, chatId, 'b1'), await send(t, ann.token, chatId, 'b2')];
    await live.until((items) => items.length === 3);

    // Everything so far is on the replica before the master dies (with asynchronous copies, only then is it sure).
    const [master] = group.servers;
    const direct = new Redis({ port: master!.port, host: '127.0.0.1' });
    expect(await direct.call('WAIT', 1, 5000)).toBe(1);
    direct.disconnect();
    await master!.stop(); // SIGKILL

    // Sends fail while there is no master, then succeed on the promoted replica.
    const after = await afterOutage(() => send(t, ann.token, chatId, 'after'));
    const items = await live.until((all) => all.some((m) => m.id === after), 20_000);
    expect(items.map((m) => m.text)).toEqual(['before', 'b1', 'b2', 'after']);
    expect(items.map((m) => m.id)).toEqual([1, ...sentBefore, after]);
    expect(live.closed).toBeNull();
    // The replica is the master now.
    const promoted = new Redis({ port: group.servers[1]!.port, host: '127.0.0.1' });
    expect(await promoted.info('replication')).toContain('role:master');
    promoted.disconnect();
  }, 60_000);

  it.each([
    [
      'beside REDIS_URL',
      () => ({ REDIS_SENTINELS: group.sentinels, REDIS_URL: 'redis://127.0.0.1:6379' }),
      /^gateway: invalid environment: set one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS$/,
    ],
    [
      'naming a master the Sentinels do not watch',
      () => ({ REDIS_SENTINELS: group.sentinels, REDIS_SENTINEL_NAME: 'nosuchmaster' }),
      /^gateway: REDIS_SENTINEL_NAME: the Sentinels at 127\.0\.0\.1:\d+ watch no master named "nosuchmaster"$/,
    ],
    [
      'out of reach',
      () => ({ REDIS_SENTINELS: '127.0.0.1:1,127.0.0.1:2' }),
      /^gateway: REDIS_SENTINELS: no Sentinel answered: 127\.0\.0\.1:1 \(.+\), 127\.0\.0\.1:2 \(.+\)$/,
    ],
  ])('stop the start in one line when REDIS_SENTINELS is %s', async (_what, env, line) => {
    const child = spawnGateway({ REDIS_URL: '', REDIS_CLUSTER_NODES: '', PORT: '0', ...env() });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await new Promise<number | null>((r) => child.once('exit', r))).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });
});

describe.runIf(inject('redis').kind === 'standalone')('REDIS_WAIT_REPLICAS', () => {
  let group: SentinelGroup;
  let t: TestApp;
  let renewals: ReturnType<typeof trackRenewals>;
  beforeAll(async () => {
    group = groups[1]!;
    // no audit reads: a subscriber reads a chat only when its doorbell rings
    t = await startTestApp(
      sentinelEnv(group, { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '5000', POLL_AUDIT_MS: '3600000' }),
    );
    renewals = trackRenewals(t);
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  it('reports a write the replica did not confirm in time, and still acknowledges it', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'hi');
    const replica = group.servers[1]!;
    const before = t.app.services.replicated.short;
    replica.child.kill('SIGSTOP'); // the replica stops copying
    try {
      expect(await send(t, ann.token, chatId, 'unconfirmed')).toBe(2);
    } finally {
      replica.child.kill('SIGCONT');
    }
    expect(t.app.services.replicated.short).toBe(before + 1);
  });

  it("holds up nothing else while it waits, and rings a message's doorbell only once the replica has it", async () => {
    const [ann, bob] = [await t.signUp(), await t.signUp()];
    const chatId = await createChat(t, ann.token, [bob.username], 'hi');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    // Past the reads of every watched head that follow each renewal of the doorbell connection (its coming up, and
    // any reconnection): like a read of the chat, they would find the message the replica lacks.
    await renewals.settled();
    const replica = group.servers[1]!;
    replica.child.kill('SIGSTOP');
    let acknowledged = false;
    let sent: Promise<number>;
    try {
      sent = send(t, ann.token, chatId, 'waiting').then((id) => ((acknowledged = true), id));
      // the send waits; a read of the same process (a chat's messages, from Redis) does not wait behind it
      await new Promise((r) => setTimeout(r, 300));
      const read = await t.gql<{ chat: { messages: { text: string }[] } }>(CHAT, { c: chatId }, bob.token);
      expect(read.data?.chat.messages.map((m) => m.text)).toEqual(['hi', 'waiting']);
      expect(acknowledged).toBe(false);
      // and the subscriber has not been told of it: its doorbell rings after the replica has it
      expect(live.items).toHaveLength(1);
    } finally {
      replica.child.kill('SIGCONT');
    }
    expect(await sent).toBe(2);
    await live.until((items) => items.length === 2);
  });

  it('acknowledges a message only once the replica has it: none is lost when the master dies right after', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'first');
    // The replica is cut off while the messages are sent: no send is acknowledged until it is back and has them;
    // the master then dies the moment the last send is acknowledged. (With REDIS_WAIT_REPLICAS=0 the sends return
    // at once, and may die with the master: bench:failover measures that loss.)
    const [master, replica] = group.servers;
    const resume = await cutReplicas(master!, [replica!]);
    const { early, ids } = await sendWhileCut(t, { token: ann.token, chatId, resume });
    expect(early).toBe(0);
    await master!.stop(); // SIGKILL
    const stored = await afterOutage(async () => {
      const r = await t.gql<{ chat: { messages: { id: number }[] } }>(CHAT, { c: chatId, first: 50 }, ann.token);
      if (!r.data?.chat) throw new Error(JSON.stringify(r.errors));
      return r.data.chat.messages;
    });
    expect(stored.map((m) => m.id)).toEqual([1, ...ids.sort((a, b) => a - b)]);
  }, 60_000);
});

describe.runIf(inject('redis').kind === 'cluster')('REDIS_WAIT_REPLICAS on a cluster', () => {
  it("waits on the master of each write's slot, and reports what no replica confirmed (this cluster has none)", async () => {
    const t = await startTestApp({ REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '50' });
    const ann = await t.signUp(); // its session is one such write
    const chatId = await createChat(t, ann.token, [], 'hi');
    const before = t.app.services.replicated.short;
    expect(await send(t, ann.token, chatId, 'waited')).toBe(2);
    expect(t.app.services.replicated.short).toBe(before + 1);
  });
});
