/**
 * DataLoader batching: `chats { unreadCount members }` for fifty chats costs a few round trips per Redis node,
 * not hundreds. A round trip is counted on the gateway's sockets as a burst of writes after a reply came in
 * (commands issued together go out back to back before any reply; a command that waited for a reply starts a
 * new burst). On the cluster, the nodes are written to in parallel.
 */
import type { Redis } from 'ioredis';
import { Cluster } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});

interface Stream {
  write: (...args: unknown[]) => boolean;
  on(event: 'data', listener: () => void): void;
  off(event: 'data', listener: () => void): void;
}

function countRoundTrips(nodes: Redis[]): { perNode: () => number[]; commands: () => number; restore: () => void } {
  const trips = nodes.map(() => 0);
  let commands = 0;
  const restores = nodes.map((node, i) => {
    const stream = (node as unknown as { stream: Stream }).stream;
    const write = stream.write;
    let replied = true;
    const onData = () => (replied = true);
    stream.on('data', onData);
    stream.write = function (this: unknown, ...args: unknown[]) {
      if (replied) trips[i]!++;
      replied = false;
      commands++;
      return write.apply(this, args);
    };
    return () => {
      stream.write = write;
      stream.off('data', onData);
    };
  });
  return { perNode: () => [...trips], commands: () => commands, restore: () => restores.forEach((r) => r()) };
}

describe('batching', () => {
  it('answers chats { unreadCount members } for 50 chats in a handful of round trips per node', async () => {
    const [me, other] = await Promise.all([t.signUp(), t.signUp()]);
    for (let i = 0; i < 50; i++)
      await t.app.services.chats.createChat(me.username, { members: [other.username], message: `hello ${i}` });
    const query = '{ chats { id unreadCount lastMessageId readUpTo memberCount members { username } } }';
    await t.gql(query, {}, me.token); // warm: scripts loaded, cluster slots known

    const nodes = t.redis instanceof Cluster ? t.redis.nodes('master') : [t.redis];
    const counter = countRoundTrips(nodes);
    const r = await t.gql<{ chats: { unreadCount: number; members: unknown[] }[] }>(query, {}, me.token);
    counter.restore();

    expect(r.errors).toBeUndefined();
    expect(r.data?.chats).toHaveLength(50);
    expect(r.data?.chats.every((c) => c.unreadCount === 1 && c.members.length === 2)).toBe(true);
    // session lookup, chat index, one batch of chat states, one batch of member lists
    expect(Math.max(...counter.perNode())).toBeLessThanOrEqual(4);
    expect(counter.perNode().reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4 * nodes.length);
    expect(counter.commands()).toBeGreaterThan(100); // 50 chat states and 50 member lists: batched, not fewer
  });
});
