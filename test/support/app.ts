/**
 * The app on a free port in this process, on the test Redis (standalone or cluster, per vitest project), with its
 * own key prefix unless told otherwise; it disposes itself (support/dispose.ts).
 */
import type { AddressInfo } from 'node:net';
import type { Client } from 'graphql-ws';
import { inject } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { closeRedisClient, createRedisClient, type RedisClient } from '../../src/redis/clients.js';
import type { MailboxCommands } from '../../src/redis/mailbox/commands.js';
import type { MailboxPoller } from '../../src/services/mailbox/poller.js';
import { eventually, postGraphQL, signUp, uniquePrefix, wsClient, type GraphQLResponse } from './clients.js';
import { disposeLater } from './dispose.js';
import { LIMITS_OFF } from './limits.js';
import type { TestRedis } from './redis-servers.js';

export * from './clients.js';

/** The environment that points a gateway at this project's test Redis. */
export function redisEnv(target: TestRedis = inject('redis')): Record<string, string> {
  return target.kind === 'cluster' ? { REDIS_CLUSTER_NODES: target.nodes.join(',') } : { REDIS_URL: target.url };
}

/** A configuration for the test Redis (or `target`): a new key prefix, quiet logs, rate limits off, `admin` an admin. */
export function testConfig(env: Record<string, string> = {}, target?: TestRedis): Config {
  return loadConfig({
    ...redisEnv(target),
    KEY_PREFIX: uniquePrefix(),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_USERS: 'admin',
    NODE_ENV: 'test',
    ...LIMITS_OFF,
    ...env,
  });
}

/** A Redis client for `config` (the test Redis), closed with the test or file that made it. */
export function testRedis(config: Config, log: Logger, name = 'test'): RedisClient {
  if (config.redis.kind === 'embedded') throw new Error('tests use the test Redis');
  const redis = createRedisClient(config.redis, log, name);
  disposeLater(() => closeRedisClient(redis));
  return redis;
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
  /** Closes it now (it closes itself after its test, or its file, anyway). */
  close(): Promise<void>;
}

/**
 * An app on a free port in this process; `log` replaces the logger of LOG_LEVEL (to read what the app logs);
 * `settings` replace settings of the loaded configuration, past the bounds the environment has (a shorter wait).
 */
export async function startTestApp(
  env: Record<string, string> = {},
  log?: Logger,
  settings: Partial<Config> = {},
): Promise<TestApp> {
  const config = { ...testConfig(env), ...settings };
  log ??= createLogger(config.logLevel);
  const redis = createRedisClient(
    config.redis as Extract<Config['redis'], { kind: 'url' | 'cluster' | 'sentinel' }>,
    log,
    'test-app',
  );
  const app = buildApp({ config, redis, log });
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/graphql`;
  const wsUrl = `ws://127.0.0.1:${port}/graphql`;
  const clients: Client[] = [];
  const close = disposeLater(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await app.close(1000);
    await closeRedisClient(redis);
  });
  return {
    app,
    config,
    redis,
    url,
    wsUrl,
    gql: (query, variables, token) => postGraphQL(url, query, variables, token),
    signUp: (username, password) => signUp(url, username, password),
    wsClient(token) {
      const client = wsClient(wsUrl, token);
      clients.push(client);
      return client;
    },
    close,
  };
}

/**
 * Resolves once each process's doorbell connection is up and its resyncs are over. Each resync drops the in-memory
 * copies of the shared cache, the first connection's included (about a second after a process starts), so a test
 * that counts memory hits starts after them.
 */
export async function doorbellsSettled(...processes: { services: { poller: MailboxPoller } }[]): Promise<void> {
  const settled = () => processes.every((p) => p.services.poller.doorbells().settled);
  if (!(await eventually(() => Promise.resolve(settled())))) throw new Error('the doorbells did not settle in 5 s');
}

/** Kills this app's doorbell connections (every shard's, on a cluster) with CLIENT KILL; how many it killed. */
export async function killDoorbells(t: TestApp): Promise<number> {
  const { name } = (t.app.services.poller as unknown as { commands: MailboxCommands }).commands.doorbells;
  const nodes = 'nodes' in t.redis ? t.redis.nodes('master') : [t.redis];
  let killed = 0;
  for (const node of nodes) {
    const list = (await node.client('LIST')) as string;
    for (const line of list.split('\n')) {
      const id = /^id=(\d+) /.exec(line)?.[1];
      if (id && line.includes(` name=`) && line.split(' name=')[1]!.split(' ')[0]!.endsWith(name)) {
        killed += Number(await node.client('KILL', 'ID', id));
      }
    }
  }
  return killed;
}
