/**
 * The only place that creates Redis clients. Every client gets the product's scripts as commands, reconnects with
 * jittered exponential backoff, and fails a command after a few retries instead of queueing it forever while Redis is
 * away. No autopipelining: measured, it costs more CPU than it saves here (docs/operations.md).
 */
import { Cluster, Redis, type Callback, type RedisOptions } from 'ioredis';
import type { TracerProvider } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { defineScripts } from './scripts.js';

export type RedisClient = Redis | Cluster;

/** Where to connect: a URL (redis://, rediss://), a unix socket path, cluster seed nodes, or a Sentinel-managed master. */
export type RedisEndpoint =
  | { kind: 'url'; url: string }
  | { kind: 'socket'; path: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[] }
  | { kind: 'sentinel'; sentinels: { host: string; port: number }[]; name: string; password: string | undefined };

const backoff = (attempt: number) => Math.min(2000, 50 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2);

function nodeOptions(name: string): RedisOptions {
  return {
    connectionName: name,
    retryStrategy: backoff,
    maxRetriesPerRequest: 2,
  };
}

export function createRedisClient(endpoint: RedisEndpoint, log: Logger, name = 'gateway'): RedisClient {
  let client: RedisClient;
  switch (endpoint.kind) {
    case 'url':
      client = new Redis(endpoint.url, nodeOptions(name));
      break;
    case 'socket':
      client = new Redis({ path: endpoint.path, ...nodeOptions(name) });
      break;
    case 'sentinel':
      // ioredis asks the Sentinels for the master, checks its role, and asks again after every reconnect; the
      // failover detector also hears the Sentinels' +switch-master, so a failover is followed without waiting for
      // the old master's connection to time out.
      client = new Redis({
        sentinels: endpoint.sentinels,
        name: endpoint.name,
        sentinelPassword: endpoint.password,
        failoverDetector: true,
        ...nodeOptions(name),
      });
      break;
    case 'cluster':
      client = new Cluster(endpoint.nodes, {
        redisOptions: nodeOptions(name),
        clusterRetryStrategy: backoff,
        scaleReads: 'master',
      });
      break;
  }
  observe(client, log, name);
  defineScripts(client);
  return client;
}

let subscribers = 0;

/**
 * A connection for the doorbells (sharded pub/sub: SSUBSCRIBE, `smessage` events) to the same Redis as `client`.
 * On a cluster it subscribes on each shard that owns a channel; ioredis re-subscribes after reconnecting, and on the
 * promoted replica when a master fails over (its slot refreshes spaced: spaceSlotRefreshes). Its name
 * (CLIENT LIST) ends with the process id and a serial, so an operator (or a test) can tell whose connection it is.
 */
export function createSubscriber(client: RedisClient, log: Logger): RedisClient {
  const name = `doorbells:${process.pid}:${++subscribers}`;
  let subscriber: RedisClient;
  if (client instanceof Cluster) {
    subscriber = client.duplicate(undefined, { shardedSubscribers: true, redisOptions: { connectionName: name } });
    spaceSlotRefreshes(subscriber);
  } else subscriber = client.duplicate({ connectionName: name });
  observe(subscriber, log, name);
  return subscriber;
}

/** The first and the longest spacing of the doorbells' slot refreshes that follow each other (spaceSlotRefreshes). */
const REFRESH_SPACING_MS = { first: 100, max: 1000 };

/**
 * ioredis's sharded subscribers ask the cluster for its slots again the moment a shard's connection ends, even one that
 * never connected. While a dead master still owns its slots (until its replica is promoted, about the node timeout and
 * a second; for good when it has none), each ask finds the same map and tries the dead master again: measured, about
 * 150 times a second per process, each a refused connection, a new connection for CLUSTER SLOTS, and every channel
 * subscribed again on the other shards, with as many "subscribers ready" (a read of every watched head). Asks that
 * follow each other are spaced here like reconnects, 100 ms doubling up to 1 s (one after a quiet period goes at
 * once): the doorbells reach a promoted replica at most a second after its promotion.
 */
function spaceSlotRefreshes(cluster: Cluster): void {
  const refresh = cluster.refreshSlotsCache.bind(cluster);
  let next = 0; // the earliest time the next ask may go
  let spacing = 0;
  let waiting: Callback<void>[] | undefined; // an ask put off until `next`, and its callers
  let timer: NodeJS.Timeout | undefined;
  const go = (callbacks: Callback<void>[]) => {
    spacing = Math.min(REFRESH_SPACING_MS.max, spacing * 2 || REFRESH_SPACING_MS.first);
    next = Date.now() + spacing;
    refresh((err) => callbacks.forEach((callback) => callback(err)));
  };
  cluster.refreshSlotsCache = (callback) => {
    if (waiting) {
      if (callback) waiting.push(callback);
      return;
    }
    const now = Date.now();
    if (now > next + REFRESH_SPACING_MS.max) spacing = 0; // quiet for a while: a new episode
    if (now >= next) return go(callback ? [callback] : []);
    const callbacks = (waiting = callback ? [callback] : []);
    timer = setTimeout(() => {
      waiting = timer = undefined;
      if (cluster.status === 'end' || cluster.status === 'disconnecting' || cluster.status === 'close')
        callbacks.forEach((c) => c(new Error('Cluster is disconnected.')));
      else go(callbacks);
    }, next - now);
    timer.unref();
  };
  cluster.once('end', () => {
    clearTimeout(timer);
    const callbacks = waiting ?? [];
    waiting = timer = undefined;
    callbacks.forEach((c) => c(new Error('Cluster is disconnected.')));
  });
}

/**
 * A connection of its own for replica waits (src/redis/replicas.ts). WAIT holds it, and confirms only what reached the
 * server it is sent to: so it never resends a command after a reconnect, nor queues one while disconnected (a WAIT
 * resent to a promoted replica would confirm writes that died with the old master). Commands sent before its first
 * `ready` fail: wait for it.
 */
export function createWaitsClient(client: RedisClient, log: Logger): RedisClient {
  const name = 'replica-waits';
  const strict = { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 };
  const waits =
    client instanceof Cluster
      ? client.duplicate(undefined, {
          enableOfflineQueue: false,
          redisOptions: { ...client.options.redisOptions, ...strict, connectionName: name },
        })
      : client.duplicate({ ...strict, enableOfflineQueue: false, connectionName: name });
  observe(waits, log, name);
  return waits;
}

/**
 * A connection to one of RedLock's independent servers (REDLOCK_NODES), named `name`. A dead or slow server must
 * count as a no at once, not hold the majority up: no offline queue (a command while disconnected fails at once), no
 * retry or resend after a reconnect (a SET resent to a server that restarted would take a lock long after its
 * attempt ended), and a command that gets no answer within `timeoutMs` fails.
 */
export function createRedlockClient(url: string, log: Logger, name: string, timeoutMs: number): Redis {
  const client = new Redis(url, {
    ...nodeOptions(name),
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
  });
  observe(client, log, name);
  defineScripts(client);
  return client;
}

/** A connection of its own for blocking commands (BLMOVE), which hold it until they return. */
export function createBlockingClient(client: RedisClient, log: Logger, name: string): RedisClient {
  const blocking = client instanceof Cluster ? client.duplicate() : client.duplicate({ connectionName: name });
  observe(blocking, log, name);
  return blocking;
}

/** What the clients of one role (a client's name up to its first `:`) sent since the process started. */
export interface RedisTraffic {
  /** Commands, each counted once however often ioredis resends it (offline queue, redirection, pipeline retry). */
  commands: number;
  /** Writes of those commands: one per command sent alone, one per pipeline or MULTI (all its commands at once). */
  roundTrips: number;
}

/** Per role: bounded, every name is chosen in the code (the gateway, doorbells, redlock, a worker's queue, …). */
const traffic = new Map<string, RedisTraffic>();
const COUNTED = Symbol('counted');
type Counted = { [COUNTED]?: true };
type Send = (command: Counted, stream?: Counted, node?: unknown) => unknown;

/** What every Redis client of this process sent, by role (GET /metrics: `gateway_redis_*_total`). */
export function redisTraffic(): ReadonlyMap<string, Readonly<RedisTraffic>> {
  return traffic;
}

/**
 * Counts what `client` sends, where every command of it passes once: its own `sendCommand` (a Cluster's, not its
 * nodes' connections, which it calls in turn; a pipeline's and a MULTI's commands pass there too, each with the
 * pipeline's buffer as `stream`). A command or a pipeline buffer ioredis hands over again (replayed from the offline
 * queue, a pipeline re-sent after MOVED) is marked and not counted twice. Commands a node's connection sends on its
 * own (a Cluster's CLUSTER SLOTS, its nodes' handshakes) are not counted; a standalone client's handshake is.
 */
function count(client: RedisClient, name: string): void {
  const role = name.split(':', 1)[0]!;
  let counts = traffic.get(role);
  if (!counts) traffic.set(role, (counts = { commands: 0, roundTrips: 0 }));
  const c = counts;
  // The class's method, looked up at each call: OpenTelemetry's instrumentation (traceRedisCommands) may patch it later.
  const proto = Object.getPrototypeOf(client) as { sendCommand: Send };
  (client as unknown as { sendCommand: Send }).sendCommand = function (this: RedisClient, command, stream, node) {
    if (!command[COUNTED]) {
      command[COUNTED] = true;
      c.commands++;
      if (!stream) c.roundTrips++;
      else if (!stream[COUNTED]) {
        stream[COUNTED] = true;
        c.roundTrips++;
      }
    }
    return proto.sendCommand.call(this, command, stream, node);
  };
}

function observe(client: RedisClient, log: Logger, name: string): void {
  count(client, name);
  let lastError = '';
  client.on('error', (err: Error) => {
    // ioredis emits the same connection error on every retry; log each distinct one once.
    if (err.message !== lastError) log.warn({ err, client: name }, 'redis connection error');
    lastError = err.message;
  });
  client.on('ready', () => {
    if (lastError) log.info({ client: name }, 'redis connection restored');
    lastError = '';
  });
}

/** How a Redis refuses a connection's credentials (a wrong password, or none where one is required). */
const REFUSED_CREDENTIALS = /^(WRONGPASS|NOAUTH)\b|invalid (username-)?password/i;

/**
 * Checks before anything starts what retrying would never fix, so that it stops the start with one line naming the
 * setting instead of a gateway that retries for ever: REDIS_URL's credentials (a Redis out of reach passes: it may
 * come later, and /readyz says so meanwhile), and a Sentinel-managed master's name and Sentinels.
 */
export async function checkEndpoint(endpoint: RedisEndpoint, timeoutMs = 5000): Promise<void> {
  if (endpoint.kind === 'sentinel') return checkSentinels(endpoint, timeoutMs);
  if (endpoint.kind !== 'url') return;
  const probe = new Redis(endpoint.url, {
    connectionName: 'credentials-check',
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  // The connection's own error says why; connect() then fails with "Connection is closed".
  let refusal: string | undefined;
  probe.on('error', (err: Error) => (refusal ??= err.message));
  try {
    await probe.connect();
  } catch {
    if (refusal && REFUSED_CREDENTIALS.test(refusal))
      throw new Error(`REDIS_URL: Redis refused its credentials (${refusal})`);
  } finally {
    probe.disconnect();
  }
}

/**
 * Asks a Sentinel-managed master's Sentinels for it: the first Sentinel that answers decides; a wrong master name or
 * Sentinels out of reach throw, naming the setting.
 */
async function checkSentinels(
  endpoint: Extract<RedisEndpoint, { kind: 'sentinel' }>,
  timeoutMs: number,
): Promise<void> {
  const problems: string[] = [];
  for (const { host, port } of endpoint.sentinels) {
    const sentinel = new Redis({
      host,
      port,
      password: endpoint.password,
      connectionName: 'sentinel-check',
      lazyConnect: true,
      connectTimeout: timeoutMs,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    sentinel.on('error', () => undefined); // reported below
    try {
      await sentinel.connect();
      const master = await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', endpoint.name);
      if (master === null)
        throw new Error(
          `REDIS_SENTINEL_NAME: the Sentinels at ${host}:${port} watch no master named "${endpoint.name}"`,
        );
      return;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (message.startsWith('REDIS_SENTINEL_NAME')) throw err;
      problems.push(`${host}:${port} (${message})`);
    } finally {
      sentinel.disconnect();
    }
  }
  throw new Error(`REDIS_SENTINELS: no Sentinel answered: ${problems.join(', ')}`);
}

let commandTracing: Promise<{ setTracerProvider(provider: TracerProvider): void }> | undefined;

/**
 * Makes every Redis command sent inside an OpenTelemetry span a child span of it, sent to `provider` (src/tracing.ts
 * calls it when tracing is on; without it, nothing of OpenTelemetry is loaded). It is
 * `@opentelemetry/instrumentation-ioredis` (ioredis 2 to 6), applied once per process to the ioredis module object
 * itself: ioredis is loaded long before tracing starts, and its ESM import passes no require hook the instrumentation
 * could wait on. A span names the command only: its arguments (keys naming users, message texts) never leave the
 * gateway.
 */
export async function traceRedisCommands(provider: TracerProvider): Promise<void> {
  commandTracing ??= (async () => {
    const [{ IORedisInstrumentation }, ioredis] = await Promise.all([
      import('@opentelemetry/instrumentation-ioredis'),
      import('ioredis'),
    ]);
    const instrumentation = new IORedisInstrumentation({ enabled: false, dbStatementSerializer: (command) => command });
    for (const definition of instrumentation.getModuleDefinitions()) definition.patch?.(ioredis);
    return instrumentation;
  })();
  (await commandTracing).setTracerProvider(provider);
}

export function isReady(client: RedisClient): boolean {
  return client.status === 'ready';
}

/** Waits until the client is ready or the deadline passes (then throws with the last connection error). */
export async function waitUntilReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (isReady(client)) return;
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (err: Error) => (lastError = err);
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms${lastError ? `: ${lastError.message}` : ''}`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/**
 * Closes `client`: QUIT once what was sent is answered; a client that is not ready (Redis away, reconnecting) is
 * disconnected at once, since its QUIT would wait out the reconnection's retries.
 */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (!isReady(client)) return client.disconnect();
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
