/** Keys of the automatic persisted queries (APQ) store: one slot, so one script registers and evicts. */
import type { Keyspace } from '../keys.js';

export type PersistedQueryKeys = ReturnType<typeof persistedQueryKeys>;

export function persistedQueryKeys({ key }: Keyspace) {
  return {
    /** hash: SHA-256 (64 lowercase hex digits) → the GraphQL document it is the hash of */
    persistedDocuments: () => key('apq', 'apq', 'documents'),
    /** sorted set: SHA-256 → its last use (ms, Redis's clock, refreshed at most once a minute per process) */
    persistedLastUse: () => key('apq', 'apq', 'used'),
    /** hash: SHA-256 → a trusted document (PERSISTED_ONLY: registered by an admin; never evicted) */
    persistedTrusted: () => key('apq', 'apq', 'trusted'),
  };
}
