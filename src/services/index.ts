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
import { createAccessLogs } from './access-logs/index.js';
import { createAds } from './ads/index.js';
import { createChat } from './chat/index.js';
import { createCoordination } from './coordination/index.js';
import { createDocuments } from './documents/index.js';
import { createGeo } from './geo/index.js';
import { createMailbox } from './mailbox/index.js';
import { createOps } from './ops/index.js';
import type { Base, Domain } from './shared/domain.js';
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
    const domains = this.domains;
    joinNamed('service', [this.services, { loaders: 0, handlers: 0, jobs: 0, close: 0 }]);
    // Loaders are made per operation: their names are checked once, here, on an anonymous viewer's set.
    joinNamed(
      'loader',
      domains.map((d) => d.loaders?.(null) ?? {}),
    );
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
      /** Per-operation DataLoaders for a viewer. */
      loaders: (viewer: string | null): L => Object.assign({}, ...domains.map((d) => d.loaders?.(viewer))) as L,
      /** What the worker runs. */
      handlers: domains.flatMap((d) => d.handlers ?? []),
      jobs: domains.flatMap((d) => d.jobs ?? []),
      /** Stops every domain, the last created first (the caller owns `redis`). */
      async close(): Promise<void> {
        for (const d of [...domains].reverse()) await d.close?.();
      },
    };
  }
}

export function createServices(redis: RedisClient, config: Config, log: Logger, now: () => number = Date.now) {
  return new Composer({ redis, space: keyspace(config.keyPrefix), config, log, now }, {}, [])
    .add(createMailbox)
    .add(createOps)
    .add(createUsers)
    .add(createCoordination)
    .add(createChat)
    .add(createTelemetry)
    .add(createGeo)
    .add(createAccessLogs)
    .add(createDocuments)
    .add(createAds)
    .build();
}
