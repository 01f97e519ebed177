/** The documents domain: documents, votes and search over the sharded chapter-7 index. */
import DataLoader from 'dataloader';
import { documentCommands } from '../../redis/documents/commands.js';
import type { SemaphoreService } from '../coordination/semaphores.js';
import type { Base, Domain } from '../shared/domain.js';
import type { AdminService } from '../users/admins.js';
import { DocumentService, type Document, type DocumentSummary } from './documents.js';
import { SearchService } from './search.js';
import { Shards } from './shards.js';

export interface DocumentLoaders {
  /** A document as the viewer sees it (viewerVoted), null when there is none: one round trip per shard per batch. */
  documents: DataLoader<string, Document | null>;
  /** The same without content, for operations that do not show it. */
  documentSummaries: DataLoader<string, DocumentSummary | null>;
}

export function createDocuments(
  { redis, space, config, log }: Base,
  { admins, semaphores }: { admins: AdminService; semaphores: SemaphoreService },
): Domain<{ documents: DocumentService; search: SearchService }, DocumentLoaders> {
  const commands = documentCommands(redis, space);
  const shards = new Shards({ commands, count: config.search.shards });
  const documents = new DocumentService({ commands, shards, admins, options: config.search });
  return {
    services: {
      documents,
      search: new SearchService({ commands, shards, semaphores, options: config.search, log }),
    },
    loaders: (viewer) => ({
      documents: new DataLoader((ids) => documents.documents(ids, viewer)),
      documentSummaries: new DataLoader((ids) => documents.summaries(ids, viewer)),
    }),
  };
}
