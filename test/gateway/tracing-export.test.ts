/**
 * OpenTelemetry traces leave over OTLP/HTTP (src/tracing.ts): with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real HTTP
 * server in this test, an operation's span (and its Redis commands') arrive there as protobuf, or as JSON with
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json, with the headers of OTEL_EXPORTER_OTLP_HEADERS. The gateway sends what it
 * holds when it stops. With the endpoint unset, no OpenTelemetry package is loaded at all.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerHooks } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTestApp } from '../support/app.js';

/** Every module this process resolves from now on (ioredis, graphql-yoga and the like were resolved before). */
const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    resolved.push(result.url);
    return result;
  },
});
const openTelemetry = () => resolved.filter((url) => /\/@opentelemetry\/|\/@envelop\/opentelemetry\//.test(url));

interface Export {
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}
const exports: Export[] = [];
const collector = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    exports.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(200, { 'content-type': String(req.headers['content-type']) }).end();
  });
});
let endpoint: string;
beforeAll(async () => {
  collector.listen(0, '127.0.0.1');
  await once(collector, 'listening');
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

describe('the OTEL_* variables', () => {
  const tracing = (env: Record<string, string>) => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', ...env }).tracing;

  it('turn tracing on with an endpoint, and are checked', () => {
    expect(tracing({})).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
    expect(
      tracing({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=1, b = x%2Cy=z',
      }),
    ).toEqual({
      url: 'https://otel.example:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { a: '1', b: 'x,y=z' },
      serviceName: 'redis-in-action-gateway',
    });
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/in', OTEL_SERVICE_NAME: 'eu' })).toMatchObject({
      url: 'http://c:4318/in',
      serviceName: 'eu',
    });
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS/,
    );
  });
});

describe('tracing', () => {
  it('loads no OpenTelemetry package when OTEL_EXPORTER_OTLP_ENDPOINT is unset', async () => {
    const t = await startTestApp();
    const { token } = await t.signUp();
    expect((await t.gql('query Untraced { me { username } }', {}, token)).errors).toBeUndefined();
    await t.close();
    expect(openTelemetry()).toEqual([]);
    expect(exports).toEqual([]);
  });

  it.each([
    ['http/protobuf', 'application/x-protobuf'],
    ['http/json', 'application/json'],
  ])('exports the spans over OTLP/HTTP as %s', async (protocol, contentType) => {
    exports.length = 0;
    const t = await startTestApp({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k%3D1',
    });
    await t.signUp(); // once Redis is ready: a command queued until the connection is up runs outside the operation's span
    expect((await t.gql('query ExportedUsers { users(prefix: "a") { username } }')).errors).toBeUndefined();
    await t.close(); // sends what the batch holds
    expect(exports.map((e) => [e.path, e.headers['content-type'], e.headers['x-collector-key']])).toContainEqual([
      '/v1/traces',
      contentType,
      'k=1',
    ]);
    const sent = Buffer.concat(exports.map((e) => e.body)).toString('latin1');
    expect(sent).toContain('query.ExportedUsers');
    expect(sent).toContain('redis-in-action-gateway'); // service.name
    expect(sent).toContain('zrange'); // a Redis command's span (users(prefix) reads a sorted set)
    expect(openTelemetry().some((url) => url.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
  });
});
