/** The documents domain: documents, votes, editing leases and search over the sharded chapter-7 index. */
import DataLoader from 'dataloader';
import { documentCommands } from '../../redis/documents/commands.js';
import type { CacheService } from '../cache/index.js';
import type { SemaphoreService } from '../coordination/semaphores.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain } from '../shared/domain.js';
import type { AdminService } from '../users/admins.js';
import { DocumentService, parseDocumentId, type Document, type DocumentSummary } from './documents.js';
import { LeaseService } from './leases.js';
import { LiveDocumentService } from './live.js';
import { LiveSearchService } from './live-search.js';
import { SearchService } from './search.js';
import { SearchActivity } from './activity.js';
import { Shards } from '../shared/shards.js';

/** Whether a load reads the documents' content, which may be most of their bytes. */
interface Reading<C extends boolean> {
  content: C;
}

/**
 * An operation's documents as its viewer sees them (viewerVoted), through two DataLoaders, one with content and one
 * without: each batch is one round trip per shard. A change primes or forgets both at once, so that nothing the rest
 * of the operation reads is older than what the change returned.
 */
export interface DocumentLoader {
  /** Document `id` (parsed: BAD_USER_INPUT when it cannot be one); null when there is none. */
  load(id: string, reading: Reading<true>): Promise<Document | null>;
  load(id: string, reading: Reading<boolean>): Promise<DocumentSummary | null>;
  /** Documents `ids` of the index (a search's hits: not parsed again); null where none. */
  loadMany(ids: readonly string[], reading: Reading<true>): Promise<(Document | null)[]>;
  loadMany(ids: readonly string[], reading: Reading<boolean>): Promise<(DocumentSummary | null)[]>;
  /** What a change returned becomes what the rest of the operation sees; returns it. */
  prime(doc: Document): Document;
  /** Forgets document `id` (deleted): the next load reads it again. */
  forget(id: string): void;
}

export interface DocumentLoaders {
  documents: DocumentLoader;
}

function documentLoader(documents: DocumentService, viewer: string | null): DocumentLoader {
  const full = new DataLoader<string, Document | null>((ids) => documents.documents(viewer, { ids }));
  const summaries = new DataLoader<string, DocumentSummary | null>((ids) => documents.summaries(viewer, { ids }));
  const loader = (reading: Reading<boolean>) => (reading.content ? full : summaries);
  return {
    // An id from a client: one that was never created is turned away before the index is read.
    load: async (id: string, reading: Reading<boolean>) => {
      const parsed = parseDocumentId(id);
      return documents.lookup({ id: parsed, read: () => loader(reading).load(parsed) });
    },
    loadMany: async (ids: readonly string[], reading: Reading<boolean>) =>
      (await loader(reading).loadMany(ids)).map((d) => {
        if (d instanceof Error) throw d;
        return d;
      }),
    prime(doc) {
      full.clear(doc.id).prime(doc.id, doc);
      summaries.clear(doc.id).prime(doc.id, doc);
      return doc;
    },
    forget(id) {
      full.clear(id);
      summaries.clear(id);
    },
  } as DocumentLoader;
}

export function createDocuments(
  { redis, space, config, log }: Base,
  {
    admins,
    semaphores,
    caches,
    poller,
  }: { admins: AdminService; semaphores: SemaphoreService; caches: CacheService; poller: MailboxPoller },
): Domain<
  {
    documents: DocumentService;
    leases: LeaseService;
    search: SearchService;
    searchActivity: SearchActivity;
    liveDocuments: LiveDocumentService;
    liveSearch: LiveSearchService;
  },
  DocumentLoaders
> {
  const commands = documentCommands(redis, space);
  const shards = new Shards({
    all: commands.shards({ count: config.search.shards }),
    claimCount: (a) => commands.claimShardCount(a),
    refusal: ({ stored, count }) =>
      `the documents index was built with SEARCH_SHARDS=${stored}, this process has ${count}: set it back (changing it needs a new index)`,
  });
  // Filled once from every shard's ids when a lookup first finds it not ready (src/services/cache/bloom.ts).
  const filter = caches.filter({
    name: 'documents',
    source: async function* () {
      await shards.ready();
      for (const shard of shards.all) yield* commands.documentIds({ shard });
    },
  });
  const absent = caches.cache<DocumentSummary>({ name: 'documents', values: false, filter });
  const known = { filter, absent };
  const documents = new DocumentService({ commands, shards, admins, options: config.search, known });
  const searchActivity = new SearchActivity({ commands, shards, log, flushMs: config.metrics.flushMs });
  const search = new SearchService({ commands, shards, options: config.search, log, activity: searchActivity });
  return {
    services: {
      documents,
      leases: new LeaseService({ commands, shards, admins, semaphores, poller, options: config.leases }),
      search,
      searchActivity,
      liveDocuments: new LiveDocumentService({ commands, shards, documents, poller, log }),
      liveSearch: new LiveSearchService({
        commands,
        shards,
        search,
        documents,
        poller,
        options: { ...config.live, concurrency: config.search.concurrency },
        log,
      }),
    },
    loaders: (viewer) => ({ documents: documentLoader(documents, viewer) }),
    close: () => searchActivity.stop(),
  };
}
