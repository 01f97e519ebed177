/**
 * Test helpers that go through the real product: the app on a free port (in this process), HTTP requests
 * with fetch, graphql-ws clients over real sockets. Each app gets its own key prefix unless told otherwise.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import { inject } from 'vitest';
import WebSocket from 'ws';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { closeRedisClient, createRedisClient, type RedisClient } from '../../src/redis/clients.js';
import { LIMITS_OFF } from './limits.js';
import type { TestRedis } from './redis-servers.js';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; [k: string]: unknown } }[];
}

export const uniquePrefix = () => `t${randomBytes(4).toString('hex')}:`;
export const uniqueName = (stem = 'u') => `${stem}${randomBytes(4).toString('hex')}`;

/** The environment that points a gateway at this project's test Redis. */
export function redisEnv(target: TestRedis = inject('redis')): Record<string, string> {
  return target.kind === 'cluster' ? { REDIS_CLUSTER_NODES: target.nodes.join(',') } : { REDIS_URL: target.url };
}

export interface TestApp {
  app: App;
  config: Config;
  redis: RedisClient;
  url: string;
  wsUrl: string;
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    token?: string,
  ): Promise<GraphQLResponse<T>>;
  signUp(username?: string, password?: string): Promise<{ token: string; username: string }>;
  wsClient(token?: string): Client;
  close(): Promise<void>;
}

/** An app on a free port in this process; `log` replaces the logger of LOG_LEVEL (to read what the app logs). */
export async function startTestApp(env: Record<string, string> = {}, log?: Logger): Promise<TestApp> {
  const config = loadConfig({
    ...redisEnv(),
    KEY_PREFIX: uniquePrefix(),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_USERS: 'admin',
    NODE_ENV: 'test',
    ...LIMITS_OFF,
    ...env,
  });
  if (config.redis.kind === 'embedded') throw new Error('test apps use the test Redis');
  log ??= createLogger(config.logLevel);
  const redis = createRedisClient(config.redis, log, 'test-app');
  const app = buildApp({ config, redis, log });
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/graphql`;
  const wsUrl = `ws://127.0.0.1:${port}/graphql`;
  const clients: Client[] = [];

  const gql: TestApp['gql'] = (query, variables, token) => postGraphQL(url, query, variables, token);

  return {
    app,
    config,
    redis,
    url,
    wsUrl,
    gql,
    async signUp(username = uniqueName(), password = 'password123') {
      const r = await gql<{ signUp: { token: string; user: { username: string } } }>(
        'mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token user { username } } }',
        { u: username, p: password },
      );
      if (!r.data?.signUp) throw new Error(`signUp failed: ${JSON.stringify(r.errors)}`);
      return { token: r.data.signUp.token, username: r.data.signUp.user.username };
    },
    wsClient(token) {
      const client = wsClient(wsUrl, token);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map(async (c) => c.dispose()));
      await app.close(1000);
      await closeRedisClient(redis);
    },
  };
}

export async function postGraphQL<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<GraphQLResponse<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, ...((await res.json()) as Omit<GraphQLResponse<T>, 'status'>) };
}

export function wsClient(
  url: string,
  token?: string,
  options: Partial<Parameters<typeof createClient>[0]> = {},
): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
    ...options,
  });
}

/** A subscription over graphql-yoga's SSE (a POST answered with text/event-stream), recording each result. */
export interface SseSubscription {
  results: Omit<GraphQLResponse, 'status'>[];
  /** Whether the server ended the stream. */
  ended: boolean;
  /** Resolves once `check()` holds; rejects after the deadline. */
  until(check: () => boolean, timeoutMs?: number): Promise<void>;
  cancel(): Promise<void>;
}

export async function sseSubscribe(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<SseSubscription> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const sub: SseSubscription = {
    results: [],
    ended: false,
    async until(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline)
          throw new Error(`SSE: timed out with ${JSON.stringify(sub.results)} (ended: ${sub.ended})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
  void (async () => {
    let buffer = '';
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (/^event: next$/m.test(event) && data)
            sub.results.push(JSON.parse(data) as Omit<GraphQLResponse, 'status'>);
        }
      }
    } catch {
      // cancelled
    }
    sub.ended = true;
  })();
  return sub;
}

/** Runs one query or mutation over a graphql-ws client and resolves with its single result. */
export function wsRequest<T = Record<string, unknown>>(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Promise<Omit<GraphQLResponse<T>, 'status'>> {
  return new Promise((resolve, reject) => {
    let result: Omit<GraphQLResponse<T>, 'status'> | undefined;
    client.subscribe<T>(
      { query, variables },
      {
        next: (value) => (result = value as Omit<GraphQLResponse<T>, 'status'>),
        error: (err) =>
          Array.isArray(err)
            ? resolve({ errors: err as GraphQLResponse['errors'] })
            : reject(err instanceof Error ? err : new Error(`socket closed: ${(err as { code?: number }).code}`)),
        complete: () => (result ? resolve(result) : reject(new Error('completed without a result'))),
      },
    );
  });
}

/** Records the names of the commands `redis` sends until `stop` is called, which returns them. */
export function recordCommands(redis: RedisClient): { stop: () => string[] } {
  const sent: string[] = [];
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    sent.push(command.name);
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  return {
    stop: () => {
      redis.sendCommand = original;
      return sent;
    },
  };
}

/** The keys starting with `prefix` on every master of `redis`, and the bytes they take (MEMORY USAGE). */
export async function prefixMemory(redis: RedisClient, prefix: string): Promise<{ keys: string[]; bytes: number }> {
  const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
  const keys: string[] = [];
  let bytes = 0;
  for (const node of nodes) {
    for (let cursor = '0'; ;) {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      for (const key of batch) {
        keys.push(key);
        bytes += (await node.memory('USAGE', key)) ?? 0;
      }
      cursor = next;
      if (cursor === '0') break;
    }
  }
  return { keys, bytes };
}

/** Polls `check` until it returns true or the deadline passes; returns whether it became true. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
