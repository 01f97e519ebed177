/**
 * `gatewayFigures`: the process's live figures for admins, the very values its GET /metrics prints (read between
 * two scrapes, each figure lies between them; a gauge equals them), named by hostname and pid; FORBIDDEN to others.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { startTestApp, uniqueName } from '../support/app.js';
import { MESSAGE_ADDED, createChat, record } from '../support/chats.js';
import { scrape } from '../support/prometheus.js';
import type { ProcessFigures } from '../../src/services/ops/figures.js';

const FIGURES = `query Figures { gatewayFigures {
  hostname pid startedAt readAt connections websockets operations pollerReads pollerHeadsRead doorbellRings watchedHeads
  subscriptions { name count } rateLimitRefusals { name count }
  redisCommands redisRoundTrips redisCommandsByClient { name count }
  caches { name memoryHits redisHits misses computations processWaits deploymentWaits negativeHits bloomRefusals }
} }`;

/** `gatewayFigures` as the test asks it (dates come as ISO strings; a cache's figures read by name). */
type Figures = Pick<
  ProcessFigures,
  | 'hostname'
  | 'pid'
  | 'connections'
  | 'websockets'
  | 'operations'
  | 'pollerReads'
  | 'watchedHeads'
  | 'subscriptions'
  | 'rateLimitRefusals'
  | 'redisCommands'
  | 'redisRoundTrips'
  | 'redisCommandsByClient'
> & { startedAt: string; readAt: string; caches: ({ name: string } & Record<string, number>)[] };

describe('gatewayFigures', () => {
  it('gives admins what this process’s /metrics prints, and refuses others', async () => {
    const t = await startTestApp({ SIGNIN_FAILURES_PER_MINUTE: '1' });
    const metrics = t.url.replace(/\/graphql$/, '/metrics');
    const admin = (await t.signUp('admin')).token;
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    // A live subscription (graphql-ws), the signin rate limit refusing, caches looked up.
    const chatId = await createChat(t, ann.token, [bob.username], 'hello');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    const wrong = uniqueName('nobody');
    for (let i = 0; i < 3; i++) await t.gql(`mutation { signIn(username: "${wrong}", password: "nope") { token } }`);

    const refused = await t.gql(FIGURES, {}, ann.token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.data).toBeNull();

    const before = await scrape(metrics);
    const answer = await t.gql<{ gatewayFigures: Figures }>(FIGURES, {}, admin);
    const after = await scrape(metrics);
    expect(answer.errors).toBeUndefined();
    const f = answer.data!.gatewayFigures;
    expect([f.hostname, f.pid]).toEqual([os.hostname(), process.pid]);
    expect(Date.parse(f.startedAt)).toBeLessThanOrEqual(Date.parse(f.readAt));

    /** Each figure lies between the two scrapes' sums of `name` (with `labels`). */
    const between = (figure: number, name: string, labels: Record<string, string> = {}) => {
      const sum = (s: typeof before) =>
        s
          .samples(name)
          .filter((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v))
          .reduce((n, x) => n + x.value, 0);
      expect(figure, `${name} ${JSON.stringify(labels)}`).toBeGreaterThanOrEqual(sum(before));
      expect(figure, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(sum(after));
    };
    expect(f.websockets).toBe(1);
    between(f.websockets, 'gateway_websockets');
    expect(f.subscriptions).toContainEqual({ name: 'ws', count: 1 });
    between(f.subscriptions.find((s) => s.name === 'ws')!.count, 'gateway_subscriptions', { transport: 'ws' });
    expect(f.connections).toBeGreaterThanOrEqual(1);
    expect(f.operations).toBeGreaterThan(5);
    between(f.operations, 'gateway_operations_total');
    between(f.pollerReads, 'gateway_mailbox_reads_total');
    expect(f.watchedHeads).toBeGreaterThanOrEqual(1);
    between(f.watchedHeads, 'gateway_mailbox_watched_heads');
    // Two of the three failed sign-ins were refused past SIGNIN_FAILURES_PER_MINUTE=1.
    expect(f.rateLimitRefusals).toContainEqual({ name: 'signin', count: 2 });
    // Every limit is listed from the start, at 0 until it refuses (the dashboard shows what it gets).
    expect(f.rateLimitRefusals.map((r) => r.name).sort()).toEqual(['operations', 'signin', 'signup']);
    expect(f.rateLimitRefusals).toContainEqual({ name: 'signup', count: 0 });
    between(2, 'gateway_rate_limit_refusals_total', { limit: 'signin' });
    // What the process's Redis clients sent: the test gateway's client (named `test-app`) among them, and no more round trips than commands.
    expect(f.redisCommandsByClient.find((c) => c.name === 'test-app')?.count).toBeGreaterThan(0);
    expect(f.redisRoundTrips).toBeLessThanOrEqual(f.redisCommands);
    between(f.redisCommands, 'gateway_redis_commands_total');
    between(f.redisRoundTrips, 'gateway_redis_round_trips_total');
    for (const c of f.redisCommandsByClient) between(c.count, 'gateway_redis_commands_total', { client: c.name });
    // Every cache /metrics labels, with each of its figures.
    expect(f.caches.map((c) => c.name)).toEqual(
      [...new Set(after.samples('gateway_cache_misses_total').map((s) => s.labels.cache))].sort(),
    );
    expect(f.caches.length).toBeGreaterThan(0);
    for (const c of f.caches) {
      between(c.memoryHits!, 'gateway_cache_hits_total', { cache: c.name, layer: 'memory' });
      between(c.redisHits!, 'gateway_cache_hits_total', { cache: c.name, layer: 'redis' });
      between(c.misses!, 'gateway_cache_misses_total', { cache: c.name });
      between(c.computations!, 'gateway_cache_computations_total', { cache: c.name });
      between(c.processWaits!, 'gateway_cache_waits_total', { cache: c.name, scope: 'process' });
      between(c.negativeHits!, 'gateway_cache_negative_hits_total', { cache: c.name });
      between(c.bloomRefusals!, 'gateway_cache_bloom_refusals_total', { cache: c.name });
    }
  });
});
