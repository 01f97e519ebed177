/**
 * OpenTelemetry traces (src/tracing.ts, gateway/plugins/tracing.ts): this process registers its own tracer provider
 * with an in-memory exporter before the gateway starts, as a preloaded SDK would, and the gateway (tracing on:
 * OTEL_EXPORTER_OTLP_ENDPOINT set) sends its spans there. A span per operation over HTTP and WebSocket, named after the
 * operation, with no variable value anywhere, its errors' codes, and the Redis commands as its children; a span for
 * an operation refused before it ran; an incoming W3C `traceparent` continued (HTTP header, WebSocket extensions).
 */
import { randomBytes } from 'node:crypto';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES_ATTRIBUTE, REFUSED_SPAN } from '../../src/gateway/plugins/tracing.js';
import { eventually, startTestApp, uniqueName, wsRequest, type TestApp } from '../support/app.js';

const exporter = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));

let t: TestApp;
let token: string;
beforeAll(async () => {
  // Tracing on; nothing is sent there: the spans go to the provider registered above.
  t = await startTestApp({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', MAX_QUERY_ALIASES: '3' });
  ({ token } = await t.signUp());
});

/** The first finished span named `name`, once there is one. */
async function spanNamed(name: string): Promise<ReadableSpan> {
  let span: ReadableSpan | undefined;
  await expect
    .poll(() => (span = exporter.getFinishedSpans().find((s) => s.name === name)), { timeout: 10_000 })
    .toBeDefined();
  return span!;
}

const traceOf = (span: ReadableSpan) =>
  exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === span.spanContext().traceId);

/** Every attribute value and event of the spans, as text. */
const everything = (spans: ReadableSpan[]) =>
  JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));

describe('tracing on', () => {
  it("gives an HTTP operation a span with its name, its Redis commands as children, and never its variables' values", async () => {
    const secret = uniqueName('secret');
    const r = await t.gql(
      'query FindUsers($prefix: String!) { users(prefix: $prefix) { username } }',
      { prefix: secret },
      token,
    );
    expect(r.errors).toBeUndefined();
    const span = await spanNamed('query.FindUsers');
    expect(span.attributes['graphql.execute.operationName']).toBe('FindUsers');
    expect(span.attributes['graphql.execute.operationType']).toBe('query');
    expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
    const redis = traceOf(span).filter((s) => s.attributes['db.system.name'] === 'redis');
    expect(redis.length).toBeGreaterThan(0);
    expect(redis.some((s) => s.parentSpanContext?.spanId === span.spanContext().spanId)).toBe(true);
    expect(everything(traceOf(span))).not.toContain(secret);
  });

  it('never records a bad variable value, which graphql-js quotes in its error message', async () => {
    const secret = uniqueName('secret');
    const r = await t.gql('query BadFirst($first: Int!) { users(prefix: "a", first: $first) { username } }', {
      first: secret,
    });
    expect(r.text).toContain(secret); // the client is told which value was wrong
    const span = await spanNamed('query.BadFirst');
    expect(span.attributes[ERROR_CODES_ATTRIBUTE]).toEqual(['BAD_USER_INPUT']);
    expect(everything(traceOf(span))).not.toContain(secret);
  });

  it('marks a refused operation with its code', async () => {
    const r = await t.gql('query MyChats { chats { id } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const span = await spanNamed('query.MyChats');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes[ERROR_CODES_ATTRIBUTE]).toEqual(['UNAUTHENTICATED']);
  });

  it('gives WebSocket operations spans too: a query, and a subscription refused at its start', async () => {
    const ws = t.wsClient();
    const run = (query: string) =>
      new Promise<unknown>((resolve) => {
        const results: unknown[] = [];
        ws.subscribe(
          { query },
          { next: (value) => results.push(value), error: resolve, complete: () => resolve(results) },
        );
      });
    await run('query WsUsers { users(prefix: "a") { username } }');
    const query = await spanNamed('query.WsUsers');
    expect(traceOf(query).some((s) => s.attributes['db.system.name'] === 'redis')).toBe(true);

    expect(JSON.stringify(await run('subscription WsNotes { notificationAdded { id } }'))).toContain('UNAUTHENTICATED');
    const refused = await spanNamed('subscription.WsNotes');
    expect(refused.status.code).toBe(SpanStatusCode.ERROR);
    expect(refused.attributes[ERROR_CODES_ATTRIBUTE]).toEqual(['UNAUTHENTICATED']);
  });
});

/** A caller's span, as a W3C `traceparent` names it. */
function caller() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** POSTs `body` to the gateway with `headers`; the answer's errors' codes. */
async function post(url: string, body: object, headers: Record<string, string> = {}): Promise<unknown[]> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const { errors } = (await res.json()) as { errors?: { extensions?: { code?: unknown } }[] };
  return (errors ?? []).map((e) => e.extensions?.code);
}

/** The finished spans of the trace `traceId`, once there is one. */
async function spansOfTrace(traceId: string): Promise<ReadableSpan[]> {
  const of = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  await expect.poll(() => of().length, { timeout: 10_000 }).toBeGreaterThan(0);
  return of();
}

/** The one span of `from` (its caller's trace) with no parent in it: the operation's, or its refusal's. */
async function rootOf(from: ReturnType<typeof caller>): Promise<ReadableSpan> {
  const spans = await spansOfTrace(from.traceId);
  const roots = spans.filter((s) => s.parentSpanContext?.spanId === from.spanId);
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

function expectRefused(span: ReadableSpan, codes: unknown[]) {
  expect(span.name).toBe(REFUSED_SPAN);
  expect(span.status.code).toBe(SpanStatusCode.ERROR);
  expect(span.attributes[ERROR_CODES_ATTRIBUTE]).toEqual(codes);
  expect(Object.keys(span.attributes)).toEqual([ERROR_CODES_ATTRIBUTE]); // no name, no document
}

describe('an incoming W3C trace context', () => {
  it("continues the caller's trace over HTTP (traceparent header) and WebSocket (the subscribe message's extensions)", async () => {
    const http = caller();
    expect(await post(t.url, { query: 'query CalledMe { me { id } }' }, { traceparent: http.traceparent })).toEqual([]);
    const operation = await rootOf(http);
    expect(operation.name).toBe('query.CalledMe');
    const trace = await spansOfTrace(http.traceId);
    expect(trace.every((s) => s.name !== REFUSED_SPAN)).toBe(true); // an operation that ran has only its own span

    const ws = caller();
    await new Promise<void>((resolve, reject) =>
      t
        .wsClient()
        .subscribe(
          { query: 'query WsCalled { users(prefix: "a") { username } }', extensions: { traceparent: ws.traceparent } },
          { next: () => undefined, error: reject, complete: resolve },
        ),
    );
    const wsOperation = await rootOf(ws);
    expect(wsOperation.name).toBe('query.WsCalled');
    expect((await spansOfTrace(ws.traceId)).some((s) => s.attributes['db.system.name'] === 'redis')).toBe(true);
  });

  it('starts a new trace when the traceparent is malformed', async () => {
    const bad = caller();
    // An all-zero parent span id is invalid (W3C Trace Context); so is a value that is no traceparent at all.
    for (const traceparent of [`00-${bad.traceId}-0000000000000000-01`, 'garbage']) {
      const name = uniqueName('Malformed');
      expect(await post(t.url, { query: `query ${name} { me { id } }` }, { traceparent })).toEqual([]);
      const span = await spanNamed(`query.${name}`);
      expect(span.spanContext().traceId).not.toBe(bad.traceId);
      expect(span.parentSpanContext).toBeUndefined();
    }
  });

  it("follows the caller's sampling flag: an operation under an unsampled parent is not recorded", async () => {
    const unsampled = caller();
    const name = uniqueName('Unsampled');
    const traceparent = unsampled.traceparent.replace(/-01$/, '-00');
    expect(await post(t.url, { query: `query ${name} { me { id } }` }, { traceparent })).toEqual([]);
    // A sampled operation after it: once its span has arrived, the first one's would have too.
    const sampled = caller();
    expect(await post(t.url, { query: `query ${name} { me { id } }` }, { traceparent: sampled.traceparent })).toEqual(
      [],
    );
    expect((await rootOf(sampled)).name).toBe(`query.${name}`);
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === unsampled.traceId)).toEqual([]);
  });
});

describe('an operation refused before it ran', () => {
  const aliases = '{ a: me { id } b: me { id } c: me { id } d: me { id } }';
  const unknownHash = { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } };

  it.each([
    ['a syntax error', { query: '{ me { id ' }],
    ['a validation error', { query: '{ noSuchField }' }],
    ["graphql-armor's alias limit", { query: aliases }],
    ['an unknown persisted query', { extensions: unknownHash }],
  ])('over HTTP gets a span with its codes: %s', async (_, body) => {
    const from = caller();
    const codes = await post(t.url, body, { traceparent: from.traceparent });
    expect(codes.length).toBeGreaterThan(0);
    expectRefused(await rootOf(from), [...new Set(codes)]);
  });

  it.each<[string, { query: string; extensions?: object }]>([
    ['a syntax error', { query: '{ me { id ' }],
    ["graphql-armor's alias limit", { query: aliases }],
    ['an unknown persisted query', { query: '', extensions: unknownHash }],
  ])('over WebSocket gets a span with its codes: %s', async (_, payload) => {
    const from = caller();
    const errors = await new Promise<unknown>((resolve) =>
      t
        .wsClient()
        .subscribe(
          { ...payload, extensions: { ...payload.extensions, traceparent: from.traceparent } },
          { next: () => undefined, error: resolve, complete: () => resolve(undefined) },
        ),
    );
    const codes = (errors as { extensions?: { code?: unknown } }[]).map((e) => e.extensions?.code);
    expect(codes.length).toBeGreaterThan(0);
    expectRefused(await rootOf(from), [...new Set(codes)]);
  });

  it("over the rate limit: BUSY before parsing (HTTP) is a refusal's span, at execution (WebSocket) the operation's", async () => {
    const limited = await startTestApp({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      RATE_LIMIT_PER_MINUTE: '2',
    });
    let from = caller();
    const busy = await eventually(async () => {
      from = caller();
      return (await post(limited.url, { query: '{ __typename }' }, { traceparent: from.traceparent }))[0] === 'BUSY';
    }, 10_000);
    expect(busy).toBe(true);
    expectRefused(await rootOf(from), ['BUSY']);

    const ws = await wsRequest(limited.wsClient(), 'query WsBusy { __typename }');
    expect(ws.errors?.[0]?.extensions?.code).toBe('BUSY');
    const span = await spanNamed('query.WsBusy');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes[ERROR_CODES_ATTRIBUTE]).toEqual(['BUSY']);
  });

  it("in maintenance mode: a mutation's span carries MAINTENANCE", async () => {
    const paused = await startTestApp({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    const { token } = await paused.signUp('admin');
    expect((await paused.gql('mutation { setMaintenance(enabled: true) }', {}, token)).errors).toBeUndefined();
    let from = caller();
    const refused = await eventually(async () => {
      from = caller();
      const body = { query: 'mutation Paused { signOut }' };
      return (
        (await post(paused.url, body, { traceparent: from.traceparent, authorization: `Bearer ${token}` }))[0] ===
        'MAINTENANCE'
      );
    }, 10_000);
    expect(refused).toBe(true);
    const span = await rootOf(from);
    expect(span.name).toBe('mutation.Paused');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes[ERROR_CODES_ATTRIBUTE]).toEqual(['MAINTENANCE']);
  });
});
