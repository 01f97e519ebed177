/**
 * createServices(): every domain's services over one Redis client, composed from the domains' factories in
 * dependency order (each gets the services of those before it). Adding a domain is one `.add()` line here; its
 * DataLoaders, worker jobs and stop are composed from what its factory returns. Services know nothing of GraphQL.
 */
import type { Logger } from 'pino';
import { joinNamed } from '../compose.js';
import type { Config } from '../config.js';
import type { RedisClient } from '../redis/clients.js';
import { keyspace } from '../redis/keys.js';
import { replicaWait } from '../redis/replicas.js';
import { createAccessLogs } from './access-logs/index.js';
import { createAds } from './ads/index.js';
import { createCache } from './cache/index.js';
import { createChat } from './chat/index.js';
import { createCoordination } from './coordination/index.js';
import { createDocuments } from './documents/index.js';
import { createGeo } from './geo/index.js';
import { createMailbox } from './mailbox/index.js';
import { createOps } from './ops/index.js';
import { createPersistedQueries } from './persisted-queries/index.js';
import type { Base, Domain, DomainMetric } from './shared/domain.js';
import { createTelemetry } from './telemetry/index.js';
import { createUsers } from './users/index.js';

export type Services = ReturnType<typeof createServices>;

/** Domains added in order; `S` and `L` are the services and loaders so far. A name given twice throws. */
export class Composer<S extends object, L extends object> {
  constructor(
    private readonly base: Base,
    private readonly services: S,
    private readonly domains: readonly Domain<unknown, unknown>[],
  ) {}

  add<S2 extends object, L2 extends object = object>(
    factory: (base: Base, services: S) => Domain<S2, L2>,
  ): Composer<S & S2, L & L2> {
    const domain = factory(this.base, this.services);
    const services = joinNamed<S & S2>('service', [this.services, domain.services]);
    return new Composer<S & S2, L & L2>(this.base, services, [...this.domains, domain]);
  }

  build() {
    const { domains, base } = this;
    joinNamed('service', [
      this.services,
      { loaders: 0, handlers: 0, jobs: 0, domainMetrics: 0, close: 0, replicated: 0 },
    ]);
    // Loaders are made per operation: their names are checked once, here, on an anonymous viewer's set.
    const loaderSets = domains.map((d) => d.loaders?.(null) ?? {});
    joinNamed('loader', loaderSets);
    const OperationLoaders = lazyLoaders(domains, loaderSets);
    // Every job and task handler on its own: two of one name are refused, within a domain too.
    joinNamed(
      'job',
      domains.flatMap((d) => (d.jobs ?? []).map((j) => ({ [j.name]: j }))),
    );
    joinNamed(
      'task handler',
      domains.flatMap((d) => (d.handlers ?? []).map((h) => ({ [`${h.queue}/${h.name}`]: h }))),
    );
    return {
      ...this.services,
      /** Per-operation DataLoaders for a viewer, each domain's made when the operation first uses one of them. */
      loaders: (viewer: string | null): L => new OperationLoaders(viewer) as unknown as L,
      /** What writes that must survive a failover wait on, and how often it fell short (REDIS_WAIT_REPLICAS). */
      replicated: this.base.replicated,
      /** What the worker runs. */
      handlers: domains.flatMap((d) => d.handlers ?? []),
      jobs: domains.flatMap((d) => d.jobs ?? []),
      /**
       * What the domains report to `GET /metrics` (their `metrics`; `metrics` is the telemetry's service), and the
       * replica waits (REDIS_WAIT_REPLICAS) that fell short.
       */
      domainMetrics: [replicaWaitsShort(base.replicated), ...domains.flatMap((d) => d.metrics ?? [])],
      /**
       * Stops every domain, the last created first (the caller owns `redis`), waiting at most `timeoutMs` (default
       * SHUTDOWN_TIMEOUT_MS) for what they write as they stop.
       */
      async close(timeoutMs = base.config.shutdownTimeoutMs): Promise<void> {
        for (const d of [...domains].reverse()) await d.close?.(timeoutMs);
        await base.replicated.close();
      },
    };
  }
}

/** WAITs that timed out with fewer replicas than REDIS_WAIT_REPLICAS (the write was acknowledged and reported). */
function replicaWaitsShort(replicated: Base['replicated']): DomainMetric {
  return {
    name: 'replica_waits_short_total',
    help: 'Writes that fewer replicas than REDIS_WAIT_REPLICAS confirmed within REDIS_WAIT_TIMEOUT_MS (acknowledged anyway, and logged)',
    type: 'counter',
    collect: () => [{ value: replicated.short }],
  };
}

/**
 * The class of an operation's loaders: a getter per loader name on its prototype makes the domain's set on first
 * use and keeps it on the instance. A live subscription holds its operation's context for its whole life, and
 * most operations use one domain's loaders or none: six DataLoaders made up front were most of its heap.
 */
function lazyLoaders(domains: readonly Domain<unknown, unknown>[], loaderSets: object[]) {
  // A symbol, so that no loader name can shadow it.
  const VIEWER = Symbol('viewer');
  class OperationLoaders {
    readonly [VIEWER]: string | null;
    constructor(viewer: string | null) {
      this[VIEWER] = viewer;
    }
  }
  domains.forEach((domain, i) => {
    for (const name of Object.keys(loaderSets[i]!)) {
      Object.defineProperty(OperationLoaders.prototype, name, {
        enumerable: true,
        get(this: OperationLoaders) {
          const made = domain.loaders!(this[VIEWER]) as Record<string, unknown>;
          for (const [key, loader] of Object.entries(made))
            Object.defineProperty(this, key, { value: loader, enumerable: true });
          return made[name];
        },
      });
    }
  });
  return OperationLoaders;
}

export function createServices(redis: RedisClient, config: Config, log: Logger, now: () => number = Date.now) {
  const space = keyspace(config.keyPrefix);
  const replicated = replicaWait(redis, config.replicaWait, space, log);
  return new Composer({ redis, space, replicated, config, log, now }, {}, [])
    .add(createMailbox)
    .add(createOps)
    .add(createCache)
    .add(createUsers)
    .add(createCoordination)
    .add(createChat)
    .add(createTelemetry)
    .add(createGeo)
    .add(createAccessLogs)
    .add(createDocuments)
    .add(createAds)
    .add(createPersistedQueries)
    .build();
}
