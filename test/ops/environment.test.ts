/**
 * The environment is checked in one place (src/config.ts): a value that would start something surprising is refused
 * with one line naming its variable.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('the environment', () => {
  it('takes numbers in decimal digits only: PORT=0x1F90 or 1e3 would listen on 8080 or 1000', () => {
    for (const port of ['0x1F90', '1e3', '4000.0', '-1'])
      expect(() => loadConfig({ PORT: port }), port).toThrow(/^invalid environment: PORT: /);
    expect(loadConfig({ PORT: '8080' }).port).toBe(8080);
    expect(loadConfig({ PORT: ' 8080 ' }).port).toBe(8080);
  });

  it("refuses a REDIS_URL whose path is no database number (ioredis's SELECT NaN crashed the gateway)", () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/abc' })).toThrow(
      /^invalid environment: REDIS_URL: its path is a database number/,
    );
    for (const url of ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/', 'redis://127.0.0.1:6379/3'])
      expect(loadConfig({ REDIS_URL: url }).redis).toEqual({ kind: 'url', url });
  });

  it('refuses OTEL_EXPORTER_OTLP_HEADERS with a value that is not URL-encoded, naming it', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(() => loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'a=%zz' })).toThrow(
      /^invalid environment: OTEL_EXPORTER_OTLP_HEADERS: a value is not URL-encoded/,
    );
    expect(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'a=b%20c' }).tracing?.headers).toEqual({ a: 'b c' });
  });

  it('refuses REDIS_WAIT_REPLICAS on the embedded redis-server, which has no replica (every write would wait)', () => {
    expect(() => loadConfig({ REDIS_WAIT_REPLICAS: '1' })).toThrow(
      'invalid environment: REDIS_WAIT_REPLICAS needs a Redis with replicas; the embedded redis-server has none',
    );
    expect(loadConfig({ REDIS_WAIT_REPLICAS: '1', REDIS_URL: 'redis://127.0.0.1:6379' }).redis.kind).toBe('url');
  });
});
