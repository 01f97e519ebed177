/**
 * The figures of the process that answers, for admins (`gatewayFigures`): read from the same registry `GET /metrics`
 * prints (src/gateway/prometheus.ts hands a reader to `attach`), never counted a second time. Each gateway process
 * has its own; deployment-wide figures are the counters in Redis (`counter`, `stats`).
 */
import { hostname } from 'node:os';
import type { DomainMetric, MetricValue } from '../shared/domain.js';

/** The samples of metrics `names` (without the `gateway_` prefix), as prom-client's registry gives them, by name. */
export type SampleReader = (names: readonly string[]) => Promise<ReadonlyMap<string, readonly MetricValue[]>>;

/** The metrics the figures are made of. */
const READ = [
  'connections',
  'websockets',
  'subscriptions',
  'operations_total',
  'mailbox_reads_total',
  'mailbox_heads_read_total',
  'mailbox_rings_total',
  'mailbox_watched_heads',
  'cache_hits_total',
  'cache_misses_total',
  'cache_computations_total',
  'cache_waits_total',
  'cache_negative_hits_total',
  'cache_bloom_refusals_total',
  'rate_limit_refusals_total',
  'redis_commands_total',
  'redis_round_trips_total',
] as const;
type Read = (typeof READ)[number];

export interface Count {
  name: string;
  count: number;
}

export interface CacheCounts {
  name: string;
  memoryHits: number;
  redisHits: number;
  misses: number;
  computations: number;
  processWaits: number;
  deploymentWaits: number;
  negativeHits: number;
  bloomRefusals: number;
}

export interface ProcessFigures {
  hostname: string;
  pid: number;
  startedAt: Date;
  readAt: Date;
  connections: number;
  websockets: number;
  /** Live subscriptions by transport (`ws`, `sse`). */
  subscriptions: Count[];
  operations: number;
  /** The mailbox poller: its reads of watched heads (one round trip per Redis node each), heads read, rings heard. */
  pollerReads: number;
  pollerHeadsRead: number;
  doorbellRings: number;
  watchedHeads: number;
  caches: CacheCounts[];
  /** BUSY refusals by rate limit, every one of RATE_LIMITS (services/ops/limits.ts). */
  rateLimitRefusals: Count[];
  /** What every Redis client of the process sent: commands, and round trips (a pipeline or MULTI is one). */
  redisCommands: number;
  redisRoundTrips: number;
  /** Commands by client role (`gateway`, `doorbells`, `worker`, …). */
  redisCommandsByClient: Count[];
}

/** What the Redis clients of each role sent (src/redis/clients.ts redisTraffic). */
export type RedisTrafficReader = () => ReadonlyMap<string, Readonly<{ commands: number; roundTrips: number }>>;

/**
 * What every Redis client of the process sent, by client role, as /metrics prints it: counted in src/redis/clients.ts
 * (a plain number per role, one increment per command), read by `traffic` at each scrape.
 */
export function redisTrafficMetrics(traffic: RedisTrafficReader): DomainMetric[] {
  const metric = (name: string, help: string, figure: 'commands' | 'roundTrips'): DomainMetric => ({
    name,
    help,
    type: 'counter',
    collect: () => [...traffic()].map(([client, counts]) => ({ labels: { client }, value: counts[figure] })),
  });
  return [
    metric(
      'redis_commands_total',
      "Commands this process's Redis clients sent (each once, however often ioredis resent it), by client role",
      'commands',
    ),
    metric(
      'redis_round_trips_total',
      "Round trips of this process's Redis clients: one per command sent alone, one per pipeline or MULTI, by client role",
      'roundTrips',
    ),
  ];
}

const STARTED_AT = new Date(Date.now() - process.uptime() * 1000);

export class GatewayFigures {
  private reader: SampleReader | undefined;

  /** Where the figures are read (the app's /metrics registry). */
  attach(reader: SampleReader): void {
    this.reader = reader;
  }

  async read(): Promise<ProcessFigures> {
    if (!this.reader) throw new Error('no figures to read: the gateway did not attach its metrics');
    const samples = await this.reader(READ);
    const of = (name: Read) => samples.get(name) ?? [];
    const sum = (name: Read, where: Record<string, string> = {}) =>
      of(name)
        .filter((s) => Object.entries(where).every(([k, v]) => s.labels?.[k] === v))
        .reduce((total, s) => total + s.value, 0);
    const byLabel = (name: Read, label: string): Count[] => {
      const counts = new Map<string, number>();
      for (const s of of(name)) {
        const key = s.labels?.[label] ?? '';
        counts.set(key, (counts.get(key) ?? 0) + s.value);
      }
      return [...counts].map(([key, count]) => ({ name: key, count })).sort((a, b) => a.name.localeCompare(b.name));
    };
    const cacheNames = [...new Set(of('cache_misses_total').map((s) => s.labels?.cache ?? ''))].sort();
    return {
      hostname: hostname(),
      pid: process.pid,
      startedAt: STARTED_AT,
      readAt: new Date(),
      connections: sum('connections'),
      websockets: sum('websockets'),
      subscriptions: byLabel('subscriptions', 'transport'),
      operations: sum('operations_total'),
      pollerReads: sum('mailbox_reads_total'),
      pollerHeadsRead: sum('mailbox_heads_read_total'),
      doorbellRings: sum('mailbox_rings_total'),
      watchedHeads: sum('mailbox_watched_heads'),
      caches: cacheNames.map((cache) => ({
        name: cache,
        memoryHits: sum('cache_hits_total', { cache, layer: 'memory' }),
        redisHits: sum('cache_hits_total', { cache, layer: 'redis' }),
        misses: sum('cache_misses_total', { cache }),
        computations: sum('cache_computations_total', { cache }),
        processWaits: sum('cache_waits_total', { cache, scope: 'process' }),
        deploymentWaits: sum('cache_waits_total', { cache, scope: 'deployment' }),
        negativeHits: sum('cache_negative_hits_total', { cache }),
        bloomRefusals: sum('cache_bloom_refusals_total', { cache }),
      })),
      rateLimitRefusals: byLabel('rate_limit_refusals_total', 'limit'),
      redisCommands: sum('redis_commands_total'),
      redisRoundTrips: sum('redis_round_trips_total'),
      redisCommandsByClient: byLabel('redis_commands_total', 'client'),
    };
  }
}
