/**
 * `GET /metrics`: Prometheus text, with prom-client. What moves per request is plain counting in memory here
 * (operations by name, errors by code, a latency histogram, HTTP responses by status, requests refused before they
 * ran, rate-limit refusals); everything else is read when the metrics are scraped: open connections, WebSockets and
 * live subscriptions, every domain's `metrics` (src/services/shared/domain.ts), the task queues' depths, and
 * prom-client's process figures (CPU, memory, event-loop lag, GC).
 *
 * Operation names come from clients. Each is labelled with the name the telemetry counted it under
 * (OperationMetrics.record: `anonymous` when not 1-64 of [A-Za-z0-9_], `other` past the deployment's registry of
 * METRICS_NAMES_MAX names), so the labels are bounded by the same registry as the counters; a name the registry
 * refused at its next flush (it filled meanwhile) is folded into `other` at the next scrape. Error codes are the
 * public codes (`other` for anything else). With METRICS=off nothing is counted per request; what is read at the
 * scrape is still served.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { GraphQLError } from 'graphql';
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services/index.js';
import { queueDepths } from '../services/coordination/index.js';
import { RATE_LIMITS, type RateLimitName } from '../services/ops/limits.js';
import type { DomainMetric, MetricValue } from '../services/shared/domain.js';
import { ANONYMOUS, OTHER } from '../services/telemetry/counters.js';
import { publicCode } from './errors.js';
import type { HttpSubscriptionTransport } from './plugins/http-media-types.js';

/** Every metric of the gateway is named `gateway_…` (prom-client's process metrics keep their standard names). */
export const METRICS_PREFIX = 'gateway_';
export const METRICS_PATH = '/metrics';
/** Upper bounds of the latency histogram, in seconds. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One operation name's figures: how many ran, errors by code, and the histogram (per bucket, +Inf last). */
interface OperationSeries {
  count: number;
  errors: Map<string, number>;
  buckets: Float64Array;
  sum: number;
  /** When the name was first labelled (ms): the registry may not have heard of it yet. */
  since: number;
}

/** Live figures of the WebSocket server, read at each scrape (gateway/ws.ts). */
export interface SocketStats {
  sockets: number;
  subscriptions: number;
}

type Value = MetricValue & { metricName?: string };

/** A metric whose values are computed at each scrape, in the shape prom-client's Registry prints. */
function scraped(name: string, help: string, type: 'counter' | 'gauge' | 'histogram', values: () => Promise<Value[]>) {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    collect: () => undefined,
    get: async () => ({ name, help, type, aggregator: 'sum', values: await values() }),
  };
  return metric as unknown as Metric;
}

/** prom-client's figures of the process (CPU, memory, event loop, GC), one registry per process however many apps. */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class GatewayMetrics {
  /** Whether per-request figures are counted (METRICS). */
  readonly enabled: boolean;
  private readonly registry = new Registry();
  private readonly operations = new Map<string, OperationSeries>();
  /** Requests refused before an operation ran (syntax, validation, limits, body, persisted query), by code. */
  private readonly refused = new Map<string, number>();
  /** Every limit from the start, at 0 until it refuses. */
  private readonly rateLimited = new Map<string, number>(Object.keys(RATE_LIMITS).map((limit) => [limit, 0]));
  private readonly responses = new Map<number, number>();
  /** Live subscriptions over HTTP, by transport. */
  private readonly http: Record<HttpSubscriptionTransport, number> = { sse: 0, multipart: 0 };
  private server: Server | undefined;
  private sockets: (() => SocketStats) | undefined;
  private readonly token: Buffer | undefined;
  private lastError = '';
  private readonly services: Services;
  private readonly namesMax: number;
  private readonly flushMs: number;
  private readonly log: Logger;

  constructor({ config, services, log }: { config: Config; services: Services; log: Logger }) {
    this.enabled = config.metrics.enabled;
    this.services = services;
    this.namesMax = config.metrics.namesMax;
    this.flushMs = config.metrics.flushMs;
    this.log = log;
    this.token = config.metrics.token === undefined ? undefined : digest(config.metrics.token);
    const counter = (name: string, help: string, label: string, counts: Map<string | number, number>) =>
      this.registry.registerMetric(
        scraped(`${METRICS_PREFIX}${name}`, help, 'counter', () =>
          Promise.resolve([...counts].map(([key, value]) => ({ labels: { [label]: String(key) }, value }))),
        ),
      );
    counter(
      'requests_refused_total',
      'GraphQL requests refused before an operation ran (syntax, validation and document limits, body size, media types, unknown or mismatching persisted query), by error code',
      'code',
      this.refused,
    );
    counter(
      'rate_limit_refusals_total',
      `Refusals with BUSY by a rate limit: ${Object.entries(RATE_LIMITS)
        .map(([limit, setting]) => `${limit} (${setting})`)
        .join(', ')}`,
      'limit',
      this.rateLimited,
    );
    counter(
      'http_responses_total',
      'HTTP responses by status (GraphQL, GraphiQL, health and /metrics alike)',
      'status',
      this.responses,
    );
    this.registerOperations();
    this.registerConnections();
    for (const metric of services.domainMetrics) this.registerDomainMetric(metric);
    processMetrics(); // from the start, so that its counters (GC, CPU) cover the process's whole life
    // The queues are named by the domains' task handlers, which the coordination domain cannot know when it is made.
    this.registerDomainMetric(
      queueDepths(services.queues, () => [...new Set(services.handlers.map((h) => h.queue))].sort()),
    );
  }

  /**
   * A served operation: `name` as the telemetry counted it (undefined: METRICS=off, nothing to do), how long it took,
   * and the errors of its result.
   */
  /** An operation refused before it was parsed (past its rate limit): counted as one taking no time, with its code. */
  refusedOperation(name: string | undefined, code: string): void {
    this.operation(name, 0, undefined);
    const series = name === undefined ? undefined : this.operations.get(name);
    if (series) add(series.errors, code);
  }

  operation(name: string | undefined, seconds: number, errors: readonly GraphQLError[] | undefined): void {
    if (name === undefined) return;
    let series = this.operations.get(name);
    if (!series) {
      series = {
        count: 0,
        errors: new Map(),
        buckets: new Float64Array(LATENCY_BUCKETS.length + 1),
        sum: 0,
        since: Date.now(),
      };
      this.operations.set(name, series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    series.buckets[bucket]!++;
    if (!errors) return;
    for (const error of errors) {
      const code = publicCode(error);
      add(series.errors, code);
      // signIn and signUp refuse with BUSY only past their rate limits.
      const field = error.path?.[0];
      if (code === 'BUSY' && (field === 'signIn' || field === 'signUp'))
        this.rateLimit(field.toLowerCase() as RateLimitName);
    }
  }

  /** A request refused before an operation ran, with the errors it was answered. */
  refusedRequest(errors: readonly GraphQLError[]): void {
    for (const error of errors) add(this.refused, publicCode(error));
  }

  /** An operation refused by a rate limit. */
  rateLimit(limit: RateLimitName): void {
    add(this.rateLimited, limit);
  }

  /** An HTTP response sent. */
  response(status: number): void {
    add(this.responses, status);
  }

  /** A subscription over HTTP (SSE or multipart) started; call the returned function when it ends. */
  httpSubscription(transport: HttpSubscriptionTransport): () => void {
    this.http[transport]++;
    let ended = false;
    return () => {
      if (!ended) this.http[transport]--;
      ended = true;
    };
  }

  /** What the scrape reads of the HTTP server and the WebSocket server. */
  watch({ server, sockets }: { server: Server; sockets: () => SocketStats }): void {
    this.server = server;
    this.sockets = sockets;
  }

  /** Serves `GET /metrics` (HEAD too); with METRICS_TOKEN, only to `Authorization: Bearer <token>`. */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    if (!this.authorized(req.headers.authorization)) {
      res
        .writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain' })
        .end('send Authorization: Bearer <METRICS_TOKEN>\n');
      return;
    }
    const text = await this.scrape();
    res.writeHead(200, { 'content-type': this.registry.contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  /**
   * Metrics `names` of the gateway's own (without the prefix; not prom-client's process figures) as their samples by
   * name: what `gatewayFigures` reads (src/services/ops/figures.ts), the very values the scrape prints. Only those
   * are read (some figures ask Redis).
   */
  async samples(names: readonly string[]): Promise<Map<string, MetricValue[]>> {
    const read = await Promise.all(
      names.map(async (name) => {
        const metric = this.registry.getSingleMetric(`${METRICS_PREFIX}${name}`);
        return [name, metric ? ((await metric.get()).values as MetricValue[]) : []] as const;
      }),
    );
    return new Map(read);
  }

  /** The metrics in Prometheus text. */
  async scrape(): Promise<string> {
    await this.foldRefusedNames();
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return own + process;
  }

  private authorized(header: string | undefined): boolean {
    if (!this.token) return true;
    const presented = /^Bearer (.+)$/i.exec(header ?? '')?.[1];
    return presented !== undefined && timingSafeEqual(digest(presented), this.token);
  }

  /**
   * Names labelled before the registry had them, which it then refused (it filled meanwhile), go to `other`, as
   * their counts did. Only once the registry is full (only then does it refuse), and only names older than a few
   * flushes (a newer one may simply not be flushed yet).
   */
  private async foldRefusedNames(): Promise<void> {
    if (!this.enabled) return;
    const candidates = [...this.operations].filter(
      ([name, s]) => name !== ANONYMOUS && name !== OTHER && Date.now() - s.since > 3 * this.flushMs,
    );
    if (candidates.length === 0) return;
    let registry: Set<string>;
    try {
      const names = await this.services.counters.list();
      if (names.length < this.namesMax) return;
      registry = new Set(names);
    } catch (err) {
      this.warn(err);
      return;
    }
    for (const [name, series] of candidates) {
      if (registry.has(name)) continue;
      const other = this.operations.get(OTHER);
      if (!other) {
        this.operations.set(OTHER, series);
      } else {
        other.count += series.count;
        other.sum += series.sum;
        series.buckets.forEach((n, i) => (other.buckets[i]! += n));
        for (const [code, n] of series.errors) add(other.errors, code, n);
      }
      this.operations.delete(name);
    }
  }

  private registerOperations(): void {
    const each = <T>(f: (name: string, s: OperationSeries) => T[]) =>
      Promise.resolve([...this.operations].flatMap(([name, s]) => f(name, s)));
    const name = `${METRICS_PREFIX}operations_total`;
    this.registry.registerMetric(
      scraped(
        name,
        'GraphQL operations served (queries and mutations executed, subscriptions started), HTTP and WebSocket, by operation name (anonymous, other past METRICS_NAMES_MAX)',
        'counter',
        () => each((operation, s) => [{ labels: { operation }, value: s.count }]),
      ),
    );
    this.registry.registerMetric(
      scraped(
        `${METRICS_PREFIX}operation_errors_total`,
        'Errors in the results of served operations, by operation name and error code',
        'counter',
        () => each((operation, s) => [...s.errors].map(([code, value]) => ({ labels: { operation, code }, value }))),
      ),
    );
    const histogram = `${METRICS_PREFIX}operation_duration_seconds`;
    this.registry.registerMetric(
      scraped(
        histogram,
        'How long operations took: queries and mutations until their result, subscriptions until their stream was set up',
        'histogram',
        () =>
          each((operation, s) => {
            let cumulative = 0;
            const buckets = [...LATENCY_BUCKETS, '+Inf' as const].map((le, i) => {
              cumulative += s.buckets[i]!;
              return { metricName: `${histogram}_bucket`, labels: { le: String(le), operation }, value: cumulative };
            });
            return [
              ...buckets,
              { metricName: `${histogram}_sum`, labels: { operation }, value: s.sum },
              { metricName: `${histogram}_count`, labels: { operation }, value: s.count },
            ];
          }),
      ),
    );
  }

  private registerConnections(): void {
    const gauge = (name: string, help: string, values: () => Promise<Value[]>) =>
      this.registry.registerMetric(scraped(`${METRICS_PREFIX}${name}`, help, 'gauge', values));
    gauge('connections', 'Open connections, HTTP and WebSocket (at most MAX_CONNECTIONS)', async () => {
      const server = this.server;
      if (!server) return [];
      const value = await new Promise<number>((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
      return [{ value }];
    });
    gauge('websockets', 'Open graphql-ws sockets', () =>
      Promise.resolve(this.sockets ? [{ value: this.sockets().sockets }] : []),
    );
    gauge('subscriptions', 'Live subscriptions, by transport (ws: graphql-ws; sse, multipart: over HTTP)', () => {
      const values: Value[] = [];
      if (this.sockets) values.push({ labels: { transport: 'ws' }, value: this.sockets().subscriptions });
      if (this.enabled) values.push({ labels: { transport: 'sse' }, value: this.http.sse });
      if (this.enabled) values.push({ labels: { transport: 'multipart' }, value: this.http.multipart });
      return Promise.resolve(values);
    });
  }

  private registerDomainMetric(metric: DomainMetric): void {
    this.registry.registerMetric(
      scraped(`${METRICS_PREFIX}${metric.name}`, metric.help, metric.type, async () => {
        try {
          return await metric.collect();
        } catch (err) {
          // Redis away: this figure is left out of the scrape, the others are served.
          this.warn(err);
          return [];
        }
      }),
    );
  }

  private warn(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== this.lastError) this.log.warn({ err }, 'a /metrics figure could not be read');
    this.lastError = message;
  }
}

function add<K>(counts: Map<K, number>, key: K, n = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + n);
}

const digest = (token: string) => createHash('sha256').update(token).digest();
