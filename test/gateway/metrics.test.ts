/**
 * GET /metrics, parsed as Prometheus parses it, moving with traffic: operations and their latency, errors by code,
 * requests refused before they ran, live subscriptions (graphql-ws and SSE), rate-limit refusals, a queue's depth,
 * the mailbox poller; operation names past METRICS_NAMES_MAX labelled `other`; METRICS_TOKEN; METRICS=off.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { eventually, sseSubscribe, startTestApp, type TestApp } from '../support/app.js';
import { MESSAGE_ADDED, createChat, record, send } from '../support/chats.js';
import { scrape } from '../support/prometheus.js';

const metricsUrl = (t: TestApp) => t.url.replace(/\/graphql$/, '/metrics');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GET /metrics', () => {
  it('moves with operations, errors, refusals, live subscriptions, a queue and the poller', async () => {
    const t = await startTestApp();
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hello');
    const before = await scrape(metricsUrl(t));
    expect(before.families.get('gateway_operations_total')?.type).toBe('COUNTER');
    expect(before.families.get('gateway_operation_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(before.value('gateway_operations_total', { operation: 'Me' })).toBeUndefined();

    // Operations, and their latency.
    for (let i = 0; i < 3; i++)
      expect((await t.gql('query Me { me { username } }', {}, ann.token)).errors).toBeUndefined();
    // An error, with its code.
    const missing = await t.gql('mutation Missing { sendMessage(chatId: "999999", text: "x") { id } }', {}, ann.token);
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // Refused before any operation ran: a validation error, an unknown persisted query.
    await t.gql('query Nope { nope }');
    await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update('x').digest('hex') } },
      }),
    });
    // A message scheduled for tomorrow waits in the scheduled queue (no worker runs here).
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await t.gql(
      'mutation Later($c: ID!, $at: DateTime!) { scheduleMessage(chatId: $c, text: "later", sendAt: $at) { id } }',
      { c: chatId, at: tomorrow },
      ann.token,
    );
    expect(scheduled.errors).toBeUndefined();

    // A live subscription over graphql-ws, one over SSE.
    const ws = t.wsClient(bob.token);
    const live = record(ws, MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    const sse = await sseSubscribe(t.url, MESSAGE_ADDED, { c: chatId }, ann.token);
    await sse.until(() => sse.results.length === 1);
    await send(t, ann.token, chatId, 'second');
    await live.until((items) => items.length === 2);

    const m = await scrape(metricsUrl(t));
    expect(m.value('gateway_operations_total', { operation: 'Me' })).toBe(3);
    expect(m.value('gateway_operation_duration_seconds_count', { operation: 'Me' })).toBe(3);
    expect(m.value('gateway_operation_duration_seconds_sum', { operation: 'Me' })).toBeGreaterThan(0);
    const buckets = m.samples('gateway_operation_duration_seconds_bucket').filter((s) => s.labels.operation === 'Me');
    expect(buckets.at(-1)).toEqual({ labels: { le: '+Inf', operation: 'Me' }, value: 3 });
    expect(buckets.map((b) => b.value)).toEqual([...buckets.map((b) => b.value)].sort((x, y) => x - y));
    expect(m.value('gateway_operation_errors_total', { operation: 'Missing', code: 'NOT_FOUND' })).toBe(1);
    expect(m.value('gateway_operation_errors_total', { operation: 'Me', code: 'NOT_FOUND' })).toBeUndefined();
    expect(m.value('gateway_requests_refused_total', { code: 'BAD_USER_INPUT' })).toBe(1);
    expect(m.value('gateway_requests_refused_total', { code: 'PERSISTED_QUERY_NOT_FOUND' })).toBe(1);
    expect(m.value('gateway_requests_refused_total', { code: 'NOT_FOUND' })).toBeUndefined();
    expect(m.value('gateway_http_responses_total', { status: '200' })).toBeGreaterThanOrEqual(8);
    expect(m.value('gateway_subscriptions', { transport: 'ws' })).toBe(1);
    expect(m.value('gateway_subscriptions', { transport: 'sse' })).toBe(1);
    expect(m.value('gateway_websockets')).toBe(1);
    expect(m.value('gateway_connections')).toBeGreaterThanOrEqual(2);
    expect(m.value('gateway_queue_tasks', { queue: 'scheduled', state: 'delayed' })).toBe(1);
    expect(m.value('gateway_queue_tasks', { queue: 'scheduled', state: 'ready' })).toBe(0);
    expect(m.value('gateway_mailbox_watched_heads')).toBeGreaterThanOrEqual(1);
    expect(m.value('gateway_mailbox_rings_total')).toBeGreaterThan(before.value('gateway_mailbox_rings_total')!);
    expect(m.value('gateway_mailbox_reads_total')).toBeGreaterThan(0);
    expect(m.value('gateway_mailbox_doorbells_up')).toBe(1);
    expect(m.value('gateway_replica_waits_short_total')).toBe(0);
    // prom-client's process figures.
    expect(m.families.get('process_cpu_user_seconds_total')?.type).toBe('COUNTER');
    expect(m.families.has('nodejs_eventloop_lag_seconds')).toBe(true);

    // Subscriptions that end leave the gauges.
    live.stop();
    await sse.cancel();
    expect(
      await eventually(async () => {
        const after = await scrape(metricsUrl(t));
        return (
          after.value('gateway_subscriptions', { transport: 'ws' }) === 0 &&
          after.value('gateway_subscriptions', { transport: 'sse' }) === 0
        );
      }),
    ).toBe(true);
  });

  it('counts no HTTP subscription whose client left before its stream started', async () => {
    const t = await startTestApp(); // its own: only this test's requests reach its server
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'hello');
    const { sessions } = t.app.services;
    const resolve = sessions.resolve.bind(sessions);
    const accepts = { sse: 'text/event-stream', multipart: 'multipart/mixed;subscriptionSpec="1.0"' } as const;
    for (const [transport, accept] of Object.entries(accepts)) {
      const before = await scrape(metricsUrl(t));
      const operation = `Left${transport}`;
      // The token's lookup answers only once the server has seen the client go: the subscription is set up after.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let lookingUp!: () => void;
      const lookedUp = new Promise<void>((r) => (lookingUp = r));
      const spy = vi.spyOn(sessions, 'resolve').mockImplementation(async (args) => {
        lookingUp();
        await released;
        return resolve(args);
      });
      const closed = new Promise((r) =>
        t.app.server.once('request', (_req, res: ServerResponse) => res.once('close', r)),
      );
      const client = new AbortController();
      const request = fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${ann.token}` },
        body: JSON.stringify({
          query: MESSAGE_ADDED.replace('subscription', `subscription ${operation}`),
          variables: { c: chatId },
        }),
        signal: client.signal,
      });
      await lookedUp;
      client.abort();
      await expect(request).rejects.toThrow();
      await closed;
      release();
      // The subscription was set up (counted as an operation), and is no longer live.
      expect(
        await eventually(
          async () => (await scrape(metricsUrl(t))).value('gateway_operations_total', { operation }) === 1,
        ),
      ).toBe(true);
      spy.mockRestore();
      expect((await scrape(metricsUrl(t))).value('gateway_subscriptions', { transport })).toBe(
        before.value('gateway_subscriptions', { transport }),
      );
    }
  });

  it('counts rate-limit refusals, and is itself no operation: served past the limit', async () => {
    const t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) codes.push((await t.gql('{ __typename }')).errors?.[0]?.extensions?.code ?? 'ok');
    expect(codes).toEqual(['ok', 'ok', 'ok', 'BUSY', 'BUSY']);
    for (let i = 0; i < 5; i++) {
      const m = await scrape(metricsUrl(t));
      expect(m.value('gateway_rate_limit_refusals_total', { limit: 'operations' })).toBe(2);
      expect(m.value('gateway_operation_errors_total', { operation: 'anonymous', code: 'BUSY' })).toBe(2);
      expect(m.value('gateway_requests_refused_total', { code: 'BUSY' })).toBeUndefined();
    }
    const signUps = await startTestApp({ SIGNUPS_PER_MINUTE: '1' });
    await signUps.signUp();
    await expect(signUps.signUp()).rejects.toThrow(/BUSY/);
    expect((await scrape(metricsUrl(signUps))).value('gateway_rate_limit_refusals_total', { limit: 'signup' })).toBe(1);
  });

  it('labels operation names past METRICS_NAMES_MAX as `other`, like the counters', async () => {
    const env = { METRICS_NAMES_MAX: '3', METRICS_FLUSH_MS: '50' };
    const labels = (m: Awaited<ReturnType<typeof scrape>>) =>
      new Map(m.samples('gateway_operations_total').map((s) => [s.labels.operation!, s.value]));

    // One after another, a flush between each: the registry (which counts `other` among its three names) takes
    // two, and the rest are `other` at once.
    const slow = await startTestApp(env);
    for (let i = 0; i < 10; i++) {
      await slow.gql(`query Named${i} { __typename }`);
      await sleep(120);
    }
    const counted = labels(await scrape(metricsUrl(slow)));
    expect(counted).toEqual(
      new Map([
        ['Named0', 1],
        ['Named1', 1],
        ['other', 8],
      ]),
    );
    expect(new Set(await slow.app.services.counters.list())).toEqual(new Set(counted.keys()));

    // All at once, within one flush: names the registry refuses at the flush are folded into `other` by the scrape.
    const burst = await startTestApp(env);
    await Promise.all(Array.from({ length: 20 }, (_, i) => burst.gql(`query Burst${i} { __typename }`)));
    await sleep(400);
    const folded = labels(await scrape(metricsUrl(burst)));
    const registry = new Set(await burst.app.services.counters.list());
    const names = [...folded.keys()].filter((n) => n !== 'other');
    expect(names.length).toBeLessThanOrEqual(2);
    for (const name of names) expect(registry.has(name)).toBe(true);
    expect([...folded.values()].reduce((a, b) => a + b, 0)).toBe(20);
    expect(folded.get('other')).toBeGreaterThanOrEqual(18);
  });

  it('wants the bearer token when METRICS_TOKEN is set', async () => {
    const token = 'a-scraper-secret-of-some-length';
    const t = await startTestApp({ METRICS_TOKEN: token });
    const get = (headers: Record<string, string> = {}) => fetch(metricsUrl(t), { headers });
    expect((await get()).status).toBe(401);
    expect((await get({ authorization: 'Bearer wrong-token-of-some-length' })).status).toBe(401);
    const m = await scrape(metricsUrl(t), { authorization: `Bearer ${token}` });
    expect(m.value('gateway_websockets')).toBe(0);
    expect((await fetch(metricsUrl(t), { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).toBe(
      405,
    );
  });

  it('counts nothing per request with METRICS=off, and still serves what it reads at the scrape', async () => {
    const t = await startTestApp({ METRICS: 'off' });
    const user = await t.signUp();
    await t.gql('query Me { me { username } }', {}, user.token);
    await t.gql('{ nope }');
    const m = await scrape(metricsUrl(t));
    expect(m.samples('gateway_operations_total')).toEqual([]);
    expect(m.samples('gateway_requests_refused_total')).toEqual([]);
    expect(m.samples('gateway_http_responses_total')).toEqual([]);
    expect(m.value('gateway_connections')).toBeGreaterThanOrEqual(1);
    expect(m.value('gateway_mailbox_doorbells_up')).toBe(1);
  });
});
