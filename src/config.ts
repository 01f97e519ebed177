/**
 * Every environment variable the gateway reads, parsed and validated in this one place.
 * Defaults are chosen so that `npm start` works on a fresh machine with `redis-server` installed.
 */
import path from 'node:path';
import { z } from 'zod';

/** MAX_DOCUMENT_BYTES when unset, lowered to MAX_REQUEST_BYTES when that is smaller. */
const DOCUMENT_BYTES_DEFAULT = 256 * 1024;
/** APQ_MAX_DOCUMENT_BYTES when unset, lowered to MAX_REQUEST_BYTES when that is smaller. */
const APQ_DOCUMENT_BYTES_DEFAULT = 16 * 1024;
/** ADS_SHARDS when unset on a cluster (one shard on any other Redis): one on each master of three (docs/ads.md). */
const AD_SHARDS_ON_A_CLUSTER = 3;

/** A whole number in decimal digits (z.coerce.number alone takes 0x1F90 and 1e3 too) from `min` to `max`. */
const intFrom = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
const list = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

/** The OTLP encodings the gateway exports traces in (both over HTTP). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port');

function toHostPort(hp: string): { host: string; port: number } {
  const i = hp.lastIndexOf(':');
  return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
}

/** OTEL_EXPORTER_OTLP_HEADERS (`key=value,...`, values URL-decoded) as headers; undefined when a value does not decode. */
function otlpHeaders(headers: string): Record<string, string> | undefined {
  try {
    return Object.fromEntries(
      headers
        .split(',')
        .filter((pair) => pair.trim())
        .map((pair): [string, string] => {
          const at = pair.indexOf('=');
          return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())];
        }),
    );
  } catch {
    return undefined;
  }
}

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: intFrom(0, 65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  REDIS_URL: z
    .url({ protocol: /^rediss?$/ })
    .refine((url) => /^\/?\d*$/.test(new URL(url).pathname), 'its path is a database number (/0, /1, ...) or none')
    .optional(),
  REDIS_CLUSTER_NODES: list.pipe(z.array(hostPort)),
  REDIS_SENTINELS: list.pipe(z.array(hostPort)),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits and _ . - only')
    .default('mymaster'),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  REDIS_WAIT_REPLICAS: intFrom(0, 16).default(0),
  REDIS_WAIT_TIMEOUT_MS: intFrom(1, 60_000).default(100),
  REDLOCK_NODES: list.pipe(
    z
      .array(z.url({ protocol: /^rediss?$/ }))
      .refine((urls) => urls.length === 0 || urls.length >= 3, 'at least three independent Redis servers, or none')
      .refine((urls) => new Set(urls).size === urls.length, 'a server listed twice would vote twice'),
  ),
  REDLOCK_MAX_LEASE_MS: intFrom(100, 3_600_000).default(30_000),
  REDLOCK_TIMEOUT_MS: intFrom(1, 60_000).default(200),
  REDIS_SERVER_BIN: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  EMBEDDED_RESTART_MS: intFrom(100, 3_600_000).default(30_000),
  KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]*$/, 'letters, digits and _ . : - only (no braces: they would change hash slots)')
    .default(''),

  SESSION_TTL: intFrom(60, 365 * 24 * 3600).default(7 * 24 * 3600),
  ADMIN_USERS: list,

  SIGNIN_FAILURES_PER_MINUTE: intFrom(0, 1_000_000).default(10),
  SIGNUPS_PER_MINUTE: intFrom(0, 1_000_000).default(30),
  RATE_LIMIT_PER_MINUTE: intFrom(0, 1_000_000_000).default(6000),

  MAX_REQUEST_BYTES: intFrom(1024, 1024 * 1024 * 1024).default(1024 * 1024),
  REQUEST_TIMEOUT_MS: intFrom(1000, 3_600_000).default(30_000),
  MAX_CONNECTIONS: intFrom(1, 10_000_000).default(10_000),
  COMPRESS_MIN_BYTES: intFrom(0, 1024 * 1024 * 1024).default(1024),
  MAX_QUERY_DEPTH: intFrom(1, 100).default(12),
  MAX_QUERY_COST: intFrom(1, 1_000_000).default(5000),
  MAX_QUERY_ALIASES: intFrom(0, 1000).default(30),
  MAX_QUERY_TOKENS: intFrom(10, 1_000_000).default(2000),
  SHUTDOWN_TIMEOUT_MS: intFrom(100, 60_000).default(8000),
  SSE_RESERVATIONS_PER_CLIENT: intFrom(0, 1000).default(8),
  SSE_RESERVATION_CONNECT_MS: intFrom(100, 3_600_000).default(30_000),

  CHAT_HISTORY: intFrom(0, 1_000_000).default(100),
  CHAT_BACKLOG: intFrom(1, 10_000_000).default(10_000),
  MAX_MESSAGE_LENGTH: intFrom(1, 1_000_000).default(4000),
  MAX_CHAT_MEMBERS: intFrom(2, 100_000).default(1000),
  MAX_USER_CHATS: intFrom(1, 1_000_000).default(1000),
  POLL_AUDIT_MS: intFrom(100, 3_600_000).default(30_000),
  WS_MAX_SUBSCRIPTIONS: intFrom(1, 10_000).default(50),
  WS_SEND_TIMEOUT_MS: intFrom(100, 600_000).default(10_000),
  MULTIPART_HEARTBEAT_MS: intFrom(100, 600_000).default(5000),

  WORKER: z.enum(['on', 'off']).default('on'),
  WORKER_CONCURRENCY: intFrom(1, 1000).default(8),
  WORKER_HEARTBEAT_MS: intFrom(50, 600_000).default(1000),
  WORKER_TIMEOUT_MS: intFrom(100, 3_600_000).default(10_000),
  QUEUE_POLL_MS: intFrom(10, 60_000).default(5000),
  TASK_MAX_ATTEMPTS: intFrom(1, 100).default(5),
  TASK_BACKOFF_MS: intFrom(1, 3_600_000).default(1000),

  METRICS: z.enum(['on', 'off']).default('on'),
  METRICS_FLUSH_MS: intFrom(10, 60_000).default(1000),
  METRICS_NAMES_MAX: intFrom(1, 1_000_000).default(1000),
  COUNTER_CLEAN_MS: intFrom(1000, 86_400_000).default(60_000),
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),

  // OpenTelemetry traces (src/gateway/plugins/tracing.ts): the names the OpenTelemetry SDKs read. Off when unset.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(OTLP_PROTOCOLS).default('http/protobuf'),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .regex(/^\s*[^=,\s]+\s*=[^,]*(,\s*[^=,\s]+\s*=[^,]*)*$/, 'expected key=value pairs separated by commas')
    .refine(
      (headers) => otlpHeaders(headers) !== undefined,
      'a value is not URL-encoded (a % not followed by two hex digits)',
    )
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('redis-in-action-gateway'),

  APQ_MAX_ENTRIES: intFrom(1, 10_000_000).default(5000),
  APQ_MAX_DOCUMENT_BYTES: intFrom(256, 1024 * 1024 * 1024).optional(),
  PERSISTED_ONLY: z.enum(['on', 'off']).default('off'),
  PERSISTED_DOCUMENTS: z.string().min(1).optional(),
  PERSISTED_TRUSTED_RECHECK_MS: intFrom(10, 86_400_000).default(60_000),

  LOG_PROCESSORS: intFrom(1, 16).default(3),
  LOG_POLL_MS: intFrom(10, 600_000).default(1000),
  UPLOAD_MAX_BYTES: intFrom(1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  LOGS_HELD_MAX_BYTES: intFrom(1024, 16 * 1024 * 1024 * 1024).default(256 * 1024 * 1024),
  LOG_UPLOAD_DEADLINE_MS: intFrom(100, 86_400_000).default(600_000),

  SEARCH_SHARDS: intFrom(1, 256).default(4),
  SEARCH_TITLE_WEIGHT: intFrom(1, 100).default(2),
  SEARCH_PREFIX_MAX: intFrom(1, 10_000).default(200),
  SEARCH_RESULT_TTL: intFrom(1, 86_400).default(300),
  SEARCH_RESULT_MAX: intFrom(100, 1_000_000).default(10_000),
  SEARCH_RESULTS_PER_USER: intFrom(1, 10_000).default(20),
  SEARCH_CONCURRENCY: intFrom(1, 1000).default(4),
  LIVE_QUERIES_PER_SOCKET: intFrom(1, 1000).default(20),
  LIVE_RECONCILE_MS: intFrom(100, 3_600_000).default(5000),
  MAX_DOCUMENT_BYTES: intFrom(1024, 64 * 1024 * 1024).optional(),
  LEASES_PER_USER_MAX: intFrom(1, 10_000).default(10),
  LEASE_WAITS_PER_USER_MAX: intFrom(1, 1000).default(4),

  ADS_EXPLORATION: z.enum(['on', 'off']).default('on'),
  ADS_FREQUENCY_CAP: intFrom(0, 1_000_000).default(20),
  ADS_SHARDS: intFrom(1, 256).optional(),

  CACHE_TTL_JITTER: z.coerce.number().min(0).max(0.5).default(0.1),
  CACHE_NEGATIVE_TTL_MS: z
    .string()
    .regex(/^\d{1,9}(-\d{1,9})?$/, 'expected MIN-MAX in ms, or one number')
    .default('30000-60000')
    .transform((s) => {
      const [min, max = min] = s.split('-').map(Number) as [number, number?];
      return { min, max };
    })
    .refine(({ min, max }) => min >= 1 && min <= max, 'MIN must be at least 1 and at most MAX'),
  CACHE_LOCK_LEASE_MS: intFrom(10, 600_000).default(3000),
  CACHE_BLOOM_CAPACITY: intFrom(100, 1_000_000_000).default(100_000),
  CACHE_BLOOM_ERROR_RATE: z.coerce.number().gt(0).max(0.25).default(0.01),
});

/** Variables of earlier versions, and what replaced them: set, they stop the start rather than be ignored. */
const RENAMED: Record<string, string> = {
  WS_SESSION_CHECK_MS:
    'gone with SESSION_CHECK_MS: a live session is checked again when a revocation may have been missed or half its SESSION_TTL has passed',
  SESSION_CHECK_MS:
    'gone: a live session is checked again when a revocation may have been missed or half its SESSION_TTL has passed',
  WS_SEND_BUFFER_BYTES: 'use WS_SEND_TIMEOUT_MS (a socket is slow when a send does not complete in time)',
  POLL_INTERVAL_MS: 'use POLL_AUDIT_MS (heads are read when a doorbell rings, otherwise once per audit period)',
  POLL_IDLE_MS: 'use POLL_AUDIT_MS (heads are read when a doorbell rings, otherwise once per audit period)',
};

export type RedisTarget =
  | { kind: 'url'; url: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[] }
  /** A master that Sentinels watch and fail over: `name` is its name in their configuration. */
  | { kind: 'sentinel'; sentinels: { host: string; port: number }[]; name: string; password: string | undefined }
  | {
      kind: 'embedded';
      dataDir: string;
      serverBin: string | undefined;
      /** How long a crashed embedded server may take to come back; then the gateway exits non-zero. */
      restartMs: number;
    };

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  logLevel: string;
  redis: RedisTarget;
  /**
   * Writes whose loss would break a promise are acknowledged once `replicas` replicas have them (WAIT), or after
   * `timeoutMs` with a warning (src/redis/replicas.ts); 0: at once (asynchronous replication).
   */
  replicaWait: { replicas: number; timeoutMs: number };
  /**
   * RedLock over independent Redis servers for the periodic jobs' locks (src/services/coordination/redlock.ts);
   * `nodes` empty: the jobs take the plain lock on the product's Redis.
   */
  redlock: {
    nodes: string[];
    /** The longest lease RedLock grants; a server that restarted counts again once it has been up this long. */
    maxLeaseMs: number;
    /** A server that does not answer a command within this long counts as a no (a dead server fails fast). */
    timeoutMs: number;
  };
  keyPrefix: string;
  sessionTtlSeconds: number;
  /** ADMIN_USERS: a development shortcut (refused in production); stored grants are the real admins. */
  adminUsers: ReadonlySet<string>;
  /** Rate limits per minute, across every process; 0 = none (src/services/ops/limits.ts). */
  rateLimits: { signInFailures: number; signUps: number; operations: number };
  limits: {
    requestBytes: number;
    /** How long a client may take to send a whole request (headers and body); then 408 and the connection closes. */
    requestTimeoutMs: number;
    /** Open connections (HTTP and WebSocket) at most; past it, new ones are closed at once. */
    connections: number;
    /** JSON answers of this many bytes or more are compressed (br or gzip, as the client accepts). */
    compressMinBytes: number;
    depth: number;
    cost: number;
    aliases: number;
    tokens: number;
    /**
     * graphql-sse single-connection reservations (PUT /graphql, reserved or streaming) one user, or one address
     * signed out, holds at once in one gateway process; 0 turns the mode off.
     */
    sseReservationsPerClient: number;
    /** How long such a reservation waits for its stream before it is dropped (the client opens it right after). */
    sseReservationConnectMs: number;
  };
  shutdownTimeoutMs: number;
  chats: {
    /** Messages every member has read are deleted, except the most recent `history`. */
    history: number;
    /** At most this many unread messages wait for a member; older ones are dropped with a `gap` notification. */
    backlog: number;
    maxMessageLength: number;
    maxMembers: number;
    /** The most chats one user is in: what their `chats` and all-chats feeds read and watch. */
    maxUserChats: number;
  };
  /** The subscription poller: every watched head is read at least once per `auditMs` (the most a lost ring delays). */
  poll: { auditMs: number };
  websocket: {
    /** Operations at once on one WebSocket, and on one graphql-sse reservation (single-connection mode). */
    maxSubscriptions: number;
    /** A socket with a send not completed for this long (a client that stopped reading) is closed with 1013. */
    sendTimeoutMs: number;
  };
  /** Apollo's multipart HTTP subscriptions send an empty part this often, so that proxies keep the stream open. */
  multipart: { heartbeatMs: number };
  /** Whether `npm start` runs a task worker in the gateway process (`npm run worker` always does). */
  worker: boolean;
  queues: {
    /** Tasks of one queue a worker runs at once. */
    concurrency: number;
    heartbeatMs: number;
    /** A worker without a heartbeat for this long counts as dead; its tasks go back to their queues. */
    timeoutMs: number;
    /** The longest a worker's promote loop sleeps when no doorbell ring says otherwise (the most a lost ring delays). */
    pollMs: number;
    maxAttempts: number;
    /** The first retry of a failed task waits about this long, each next one twice as long. */
    backoffMs: number;
  };
  metrics: {
    /** Whether served operations are counted and timed. */
    enabled: boolean;
    /** How often counts, timings and log lines gathered in memory are written to Redis. */
    flushMs: number;
    /** How often a worker cleans old counter samples (one worker at a time). */
    cleanMs: number;
    /** Distinct counter names the deployment keeps (operation names come from clients); more count as `other`. */
    namesMax: number;
    /** METRICS_TOKEN: `GET /metrics` wants `Authorization: Bearer <token>`; undefined: it is open. */
    token: string | undefined;
  };
  /**
   * OpenTelemetry traces, exported over OTLP/HTTP; undefined (OTEL_EXPORTER_OTLP_ENDPOINT and
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT unset): no tracing, and no OpenTelemetry SDK is loaded.
   */
  tracing:
    | {
        /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
        url: string;
        protocol: (typeof OTLP_PROTOCOLS)[number];
        /** OTEL_EXPORTER_OTLP_HEADERS (`key=value,...`, values URL-decoded), sent with every export. */
        headers: Record<string, string>;
        serviceName: string;
      }
    | undefined;
  /** Automatic persisted queries: the store in Redis holds at most `maxEntries` documents of `maxDocumentBytes` each. */
  persistedQueries: {
    maxEntries: number;
    maxDocumentBytes: number;
    /**
     * PERSISTED_ONLY: only trusted documents run (the manifest's, and those an admin registered); whole documents
     * only from admins.
     */
    only: boolean;
    /** PERSISTED_DOCUMENTS: the manifest (graphql-codegen's persisted-documents.json), an absolute path. */
    manifest: string | undefined;
    /**
     * PERSISTED_TRUSTED_RECHECK_MS: how long a process runs a document an admin registered from memory before it
     * reads it from Redis again, so that one removed (`npm run persisted -- remove`) stops running within it.
     */
    trustedRecheckMs: number;
  };
  accessLogs: {
    /** Processors that share each uploaded access log (each takes every Nth line). */
    processors: number;
    /** How often a processor looks for new uploads. */
    pollMs: number;
    /** The largest upload. */
    uploadMaxBytes: number;
    /** Uploads waiting in Redis may hold at most this many bytes together; past it, uploads are BUSY. */
    heldMaxBytes: number;
    /**
     * An upload not announced to the processors this long after it started is taken for one whose uploader died:
     * processor 1 fails it, giving its bytes back.
     */
    uploadDeadlineMs: number;
  };
  search: {
    /** Index shards (hash tags); set once: documents placed under one count are not found under another. */
    shards: number;
    /** How many content words one title word counts as (in relevance). */
    titleWeight: number;
    /** The most words one `word*` expands to. */
    prefixMax: number;
    /** How long a result set lives after its last use, in seconds. */
    resultTtlSeconds: number;
    /** The most results a result set keeps (totalCount still counts every match). */
    resultMax: number;
    /** Live result sets one user keeps; a new one past it deletes their least recently used. */
    resultsPerUser: number;
    /** Searches one user runs at once; past it, BUSY. */
    concurrency: number;
    /** The largest document content, in bytes of UTF-8. */
    documentBytes: number;
  };
  /** Live search (searchChanged, src/services/documents/live-search.ts). */
  live: {
    /** searchChanged subscriptions one WebSocket holds at once; past it, BUSY. */
    queriesPerSocket: number;
    /**
     * A RELEVANCE (or prefix) live query is searched again at most this often while writes happen anywhere (they
     * move idf and prefix expansions), so that its top converges to what searchDocuments answers.
     */
    reconcileMs: number;
  };
  /** The documents' editing leases (src/services/documents/leases.ts). */
  leases: {
    /** Leases one user holds at once (a wait counts while it lasts); past it, acquireDocumentLease is BUSY. */
    perUser: number;
    /** acquireDocumentLease calls with waitSeconds > 0 of one user waiting at once in one gateway process; past it, BUSY. */
    waitsPerUser: number;
  };
  /** The shared cache (src/services/cache/, docs/cache.md). */
  cache: {
    /** Every value's TTL is its cache's TTL times 1 ± up to this fraction (uniform): keys written together expire apart. */
    ttlJitter: number;
    /** An absence (a key whose computation found nothing) is kept a uniform draw from this range, in ms. */
    negativeTtlMs: { min: number; max: number };
    /** A miss's lock lasts this long unless its holder, still computing, extends it; a dead holder's runs out. */
    lockLeaseMs: number;
    /** A Bloom filter's first sub-filter holds this many items at `errorRate`; each next one twice as many, at half the rate. */
    bloom: { capacity: number; errorRate: number };
  };
  ads: {
    /** Thompson sampling of each candidate's click rate (true), or the book's learned eCPM alone (false). */
    exploration: boolean;
    /** Views of one ad one viewer gets a day; 0: no cap. */
    frequencyCap: number;
    /** Shards the ads are placed in (hash tags); set once: ads placed under one number are not found under another. */
    shards: number;
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(raw: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable counts as unset (compose files and CI templates pass `REDIS_URL=`).
  const env = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== ''));
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid environment: ${problems}`);
  }
  const e = parsed.data;
  for (const [old, now] of Object.entries(RENAMED)) {
    if (env[old] !== undefined) throw new ConfigError(`invalid environment: ${old} is gone; ${now}`);
  }
  if (e.NODE_ENV === 'production' && e.ADMIN_USERS.length > 0) {
    throw new ConfigError(
      'ADMIN_USERS is refused with NODE_ENV=production: whoever signs up a listed name first would be admin; grant admins with npm run admin -- grant NAME',
    );
  }
  if (
    [e.REDIS_URL !== undefined, e.REDIS_CLUSTER_NODES.length > 0, e.REDIS_SENTINELS.length > 0].filter(Boolean).length >
    1
  ) {
    throw new ConfigError('invalid environment: set one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS');
  }
  if (e.REDIS_WAIT_REPLICAS > 0 && !e.REDIS_URL && e.REDIS_CLUSTER_NODES.length + e.REDIS_SENTINELS.length === 0) {
    throw new ConfigError(
      'invalid environment: REDIS_WAIT_REPLICAS needs a Redis with replicas; the embedded redis-server has none',
    );
  }
  if (e.CHAT_HISTORY > e.CHAT_BACKLOG) {
    throw new ConfigError('invalid environment: CHAT_HISTORY must not exceed CHAT_BACKLOG');
  }
  if (e.LOGS_HELD_MAX_BYTES < e.UPLOAD_MAX_BYTES) {
    throw new ConfigError('invalid environment: LOGS_HELD_MAX_BYTES must be at least UPLOAD_MAX_BYTES');
  }
  if (e.MAX_DOCUMENT_BYTES !== undefined && e.MAX_REQUEST_BYTES < e.MAX_DOCUMENT_BYTES) {
    throw new ConfigError('invalid environment: MAX_REQUEST_BYTES must be at least MAX_DOCUMENT_BYTES');
  }
  if (e.APQ_MAX_DOCUMENT_BYTES !== undefined && e.MAX_REQUEST_BYTES < e.APQ_MAX_DOCUMENT_BYTES) {
    throw new ConfigError('invalid environment: MAX_REQUEST_BYTES must be at least APQ_MAX_DOCUMENT_BYTES');
  }
  if (e.WORKER_TIMEOUT_MS < 2 * e.WORKER_HEARTBEAT_MS) {
    throw new ConfigError('invalid environment: WORKER_TIMEOUT_MS must be at least twice WORKER_HEARTBEAT_MS');
  }
  const redis: RedisTarget = e.REDIS_URL
    ? { kind: 'url', url: e.REDIS_URL }
    : e.REDIS_CLUSTER_NODES.length > 0
      ? { kind: 'cluster', nodes: e.REDIS_CLUSTER_NODES.map(toHostPort) }
      : e.REDIS_SENTINELS.length > 0
        ? {
            kind: 'sentinel',
            sentinels: e.REDIS_SENTINELS.map(toHostPort),
            name: e.REDIS_SENTINEL_NAME,
            password: e.REDIS_SENTINEL_PASSWORD,
          }
        : {
            kind: 'embedded',
            dataDir: path.resolve(e.DATA_DIR),
            serverBin: e.REDIS_SERVER_BIN,
            restartMs: e.EMBEDDED_RESTART_MS,
          };
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    redis,
    replicaWait: { replicas: e.REDIS_WAIT_REPLICAS, timeoutMs: e.REDIS_WAIT_TIMEOUT_MS },
    redlock: { nodes: e.REDLOCK_NODES, maxLeaseMs: e.REDLOCK_MAX_LEASE_MS, timeoutMs: e.REDLOCK_TIMEOUT_MS },
    keyPrefix: e.KEY_PREFIX,
    sessionTtlSeconds: e.SESSION_TTL,
    adminUsers: new Set(e.ADMIN_USERS.map((u) => u.toLowerCase())),
    rateLimits: {
      signInFailures: e.SIGNIN_FAILURES_PER_MINUTE,
      signUps: e.SIGNUPS_PER_MINUTE,
      operations: e.RATE_LIMIT_PER_MINUTE,
    },
    limits: {
      requestBytes: e.MAX_REQUEST_BYTES,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      connections: e.MAX_CONNECTIONS,
      compressMinBytes: e.COMPRESS_MIN_BYTES,
      depth: e.MAX_QUERY_DEPTH,
      cost: e.MAX_QUERY_COST,
      aliases: e.MAX_QUERY_ALIASES,
      tokens: e.MAX_QUERY_TOKENS,
      sseReservationsPerClient: e.SSE_RESERVATIONS_PER_CLIENT,
      sseReservationConnectMs: e.SSE_RESERVATION_CONNECT_MS,
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    chats: {
      history: e.CHAT_HISTORY,
      backlog: e.CHAT_BACKLOG,
      maxMessageLength: e.MAX_MESSAGE_LENGTH,
      maxMembers: e.MAX_CHAT_MEMBERS,
      maxUserChats: e.MAX_USER_CHATS,
    },
    poll: { auditMs: e.POLL_AUDIT_MS },
    websocket: {
      maxSubscriptions: e.WS_MAX_SUBSCRIPTIONS,
      sendTimeoutMs: e.WS_SEND_TIMEOUT_MS,
    },
    multipart: { heartbeatMs: e.MULTIPART_HEARTBEAT_MS },
    worker: e.WORKER === 'on',
    queues: {
      concurrency: e.WORKER_CONCURRENCY,
      heartbeatMs: e.WORKER_HEARTBEAT_MS,
      timeoutMs: e.WORKER_TIMEOUT_MS,
      pollMs: e.QUEUE_POLL_MS,
      maxAttempts: e.TASK_MAX_ATTEMPTS,
      backoffMs: e.TASK_BACKOFF_MS,
    },
    metrics: {
      enabled: e.METRICS === 'on',
      flushMs: e.METRICS_FLUSH_MS,
      cleanMs: e.COUNTER_CLEAN_MS,
      namesMax: e.METRICS_NAMES_MAX,
      token: e.METRICS_TOKEN,
    },
    tracing: tracingConfig(e),
    persistedQueries: {
      maxEntries: e.APQ_MAX_ENTRIES,
      maxDocumentBytes: e.APQ_MAX_DOCUMENT_BYTES ?? Math.min(APQ_DOCUMENT_BYTES_DEFAULT, e.MAX_REQUEST_BYTES),
      only: e.PERSISTED_ONLY === 'on',
      manifest: e.PERSISTED_DOCUMENTS === undefined ? undefined : path.resolve(e.PERSISTED_DOCUMENTS),
      trustedRecheckMs: e.PERSISTED_TRUSTED_RECHECK_MS,
    },
    accessLogs: {
      processors: e.LOG_PROCESSORS,
      pollMs: e.LOG_POLL_MS,
      uploadMaxBytes: e.UPLOAD_MAX_BYTES,
      heldMaxBytes: e.LOGS_HELD_MAX_BYTES,
      uploadDeadlineMs: e.LOG_UPLOAD_DEADLINE_MS,
    },
    search: {
      shards: e.SEARCH_SHARDS,
      titleWeight: e.SEARCH_TITLE_WEIGHT,
      prefixMax: e.SEARCH_PREFIX_MAX,
      resultTtlSeconds: e.SEARCH_RESULT_TTL,
      resultMax: e.SEARCH_RESULT_MAX,
      resultsPerUser: e.SEARCH_RESULTS_PER_USER,
      concurrency: e.SEARCH_CONCURRENCY,
      documentBytes: e.MAX_DOCUMENT_BYTES ?? Math.min(DOCUMENT_BYTES_DEFAULT, e.MAX_REQUEST_BYTES),
    },
    live: { queriesPerSocket: e.LIVE_QUERIES_PER_SOCKET, reconcileMs: e.LIVE_RECONCILE_MS },
    leases: { perUser: e.LEASES_PER_USER_MAX, waitsPerUser: e.LEASE_WAITS_PER_USER_MAX },
    ads: {
      exploration: e.ADS_EXPLORATION === 'on',
      frequencyCap: e.ADS_FREQUENCY_CAP,
      shards: e.ADS_SHARDS ?? (redis.kind === 'cluster' ? AD_SHARDS_ON_A_CLUSTER : 1),
    },
    cache: {
      ttlJitter: e.CACHE_TTL_JITTER,
      negativeTtlMs: e.CACHE_NEGATIVE_TTL_MS,
      lockLeaseMs: e.CACHE_LOCK_LEASE_MS,
      bloom: { capacity: e.CACHE_BLOOM_CAPACITY, errorRate: e.CACHE_BLOOM_ERROR_RATE },
    },
  };
}

function tracingConfig(e: z.infer<typeof EnvSchema>): Config['tracing'] {
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT && `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`);
  if (!url) return undefined;
  return {
    url,
    protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: otlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS ?? '') ?? {},
    serviceName: e.OTEL_SERVICE_NAME,
  };
}
