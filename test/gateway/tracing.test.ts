/**
 * OpenTelemetry traces (src/tracing.ts, gateway/plugins/tracing.ts): this process registers its own tracer provider
 * with an in-memory exporter before the gateway starts, as a preloaded SDK would, and the gateway (tracing on:
 * OTEL_EXPORTER_OTLP_ENDPOINT set) sends its spans there. A span per operation over HTTP and WebSocket, named after the
 * operation, with no variable value anywhere, its errors' codes, and the Redis commands as its children.
 */
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES_ATTRIBUTE } from '../../src/gateway/plugins/tracing.js';
import { startTestApp, uniqueName, type TestApp } from '../support/app.js';

const exporter = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));

let t: TestApp;
let token: string;
beforeAll(async () => {
  // Tracing on; nothing is sent there: the spans go to the provider registered above.
  t = await startTestApp({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
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
