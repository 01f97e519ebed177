/** The persisted-queries domain: Apollo's automatic persisted queries, their documents stored in Redis. */
import { persistedQueryCommands } from '../../redis/persisted-queries/commands.js';
import type { Base, Domain, DomainMetric } from '../shared/domain.js';
import type { AdminService } from '../users/admins.js';
import { loadManifest } from './manifest.js';
import { PersistedQueryStore } from './store.js';
import { TrustedDocuments } from './trusted.js';

export function createPersistedQueries(
  { redis, space, replicated, config, log }: Base,
  { admins }: { admins: AdminService },
): Domain<{ persistedQueries: PersistedQueryStore; trustedDocuments: TrustedDocuments }> {
  const commands = persistedQueryCommands(redis, space, replicated);
  const options = config.persistedQueries;
  const persistedQueries = new PersistedQueryStore({ commands, options, log });
  const trustedDocuments = new TrustedDocuments({
    commands,
    admins,
    manifest: options.manifest === undefined ? new Map() : loadManifest(options.manifest),
    options,
    log,
  });
  const f = persistedQueries.figures;
  const metrics: DomainMetric[] = [
    {
      name: 'persisted_queries_stored',
      help: 'Documents the persisted-query store holds (every process), at most APQ_MAX_ENTRIES',
      type: 'gauge',
      collect: async () => [{ value: await persistedQueries.size() }],
    },
    {
      name: 'persisted_queries_lookups_total',
      help: 'Hash-only requests by where the document was found: in memory, in Redis, or missing (PersistedQueryNotFound)',
      type: 'counter',
      collect: () => [
        { labels: { found: 'memory' }, value: f.memory },
        { labels: { found: 'redis' }, value: f.redis },
        { labels: { found: 'missing' }, value: f.missing },
      ],
    },
    {
      name: 'persisted_queries_registered_total',
      help: 'Documents registered through this process: stored in Redis, or larger than APQ_MAX_DOCUMENT_BYTES (not stored)',
      type: 'counter',
      collect: () => [
        { labels: { outcome: 'stored' }, value: f.stored },
        { labels: { outcome: 'too_large' }, value: f.tooLarge },
      ],
    },
    {
      name: 'persisted_queries_evicted_total',
      help: 'Documents the store evicted (least recently used) to make room for those this process stored',
      type: 'counter',
      collect: () => [{ value: f.evicted }],
    },
  ];
  return { services: { persistedQueries, trustedDocuments }, metrics, close: () => persistedQueries.stop() };
}
