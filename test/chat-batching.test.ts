/**
 * DataLoader batching plus ioredis autopipelining: `chats { unreadCount members }` for fifty chats costs a few
 * pipelined round trips, not hundreds. Counted as writes on the gateway's Redis sockets (each write is one
 * pipeline sent to one node; on the cluster, the nodes are written to in parallel).
 */
import type { Redis } from 'ioredis';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

function countWrites(nodes: Redis[]): { perNode: () => number[]; restore: () => void } {
  const counts = nodes.map(() => 0);
  const restores = nodes.map((node, i) => {
    const stream = (node as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
    const write = stream.write;
    stream.write = function (this: unknown, ...args: unknown[]) {
      counts[i]!++;
      return write.apply(this, args);
    };
    return () => (stream.write = write);
  });
  return { perNode: () => [...counts], restore: () => restores.forEach((r) => r()) };
}

describe('batching', () => {
  it('answers chats { unreadCount members } for 50 chats in a handful of round trips per node', async () => {
    const [me, other] = await Promise.all([t.signUp(), t.signUp()]);
    for (let i = 0; i < 50; i++) await t.app.services.chats.create(me.username, [other.username], `hello ${i}`, false);
    const query = '{ chats { id unreadCount lastMessageId readUpTo memberCount members { username } } }';
    await t.gql(query, {}, me.token); // warm: scripts loaded, cluster slots known

    const nodes = t.redis instanceof Cluster ? t.redis.nodes('master') : [t.redis];
    const counter = countWrites(nodes);
    const r = await t.gql<{ chats: { unreadCount: number; members: unknown[] }[] }>(query, {}, me.token);
    counter.restore();

    expect(r.errors).toBeUndefined();
    expect(r.data?.chats).toHaveLength(50);
    expect(r.data?.chats.every((c) => c.unreadCount === 1 && c.members.length === 2)).toBe(true);
    // session lookup, chat index, one batch of chat states, one batch of member lists
    expect(Math.max(...counter.perNode())).toBeLessThanOrEqual(4);
    expect(counter.perNode().reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4 * nodes.length);
  });
});
