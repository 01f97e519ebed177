/**
 * The persisted queries' door to Redis: a store of GraphQL documents by SHA-256, bounded by a count with the least
 * recently used evicted in the script that registers (src/services/persisted-queries/).
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import type { ReplicaWait } from '../replicas.js';
import { script } from '../scripts.js';
import { refused, type Refused } from '../status.js';
import { persistedQueryKeys } from './keys.js';

const registerScript = script<number>('registerPersistedQuery');
const readScript = script<string | null>('readPersistedQuery');
const touchScript = script<number>('touchPersistedQueries');
const trustScript = script<number>('trustPersistedQuery');

export type PersistedQueryCommands = ReturnType<typeof persistedQueryCommands>;

/** `replicated`: what a removal of a trusted document waits on before it is acknowledged (src/redis/replicas.ts). */
export function persistedQueryCommands(redis: RedisClient, space: Keyspace, replicated: ReplicaWait) {
  const k = persistedQueryKeys(space);
  const keys = [k.persistedDocuments(), k.persistedLastUse()];
  return {
    /** Stores `document` under `sha256` (kept if already there), evicting the least recently used past `max`: how many went. */
    register(a: { sha256: string; document: string; max: number }): Promise<number> {
      return registerScript(redis, keys, [a.sha256, a.document, a.max]);
    },

    /** The document stored under `sha256` (marked used now), or null. */
    async read(a: { sha256: string }): Promise<string | null> {
      return (await readScript(redis, keys, [a.sha256])) ?? null;
    },

    /** Marks the documents of `sha256s` used now: how many were still stored. */
    touch(a: { sha256s: readonly string[] }): Promise<number> {
      return touchScript(redis, [k.persistedLastUse()], a.sha256s);
    },

    /** Stores a trusted document under `sha256` unless `max` are stored: whether it is new, or refused (FULL). */
    async trust(a: { sha256: string; document: string; max: number }): Promise<boolean | Refused> {
      const reply = await trustScript(redis, [k.persistedTrusted()], [a.sha256, a.document, a.max]);
      return reply < 0 ? refused(reply) : reply === 1;
    },

    /** The trusted document stored under `sha256`, or null. */
    readTrusted(a: { sha256: string }): Promise<string | null> {
      return redis.hget(k.persistedTrusted(), a.sha256);
    },

    /** The trusted documents, a batch `[sha256, document, sha256, document, …]` at a time (HSCAN: one may come twice). */
    scanTrusted(): AsyncIterable<string[]> {
      return redis.hscanStream(k.persistedTrusted(), { count: 100 });
    },

    /** Removes the trusted document under `sha256`, a failover not bringing it back: whether there was one. */
    async untrust(a: { sha256: string }): Promise<boolean> {
      if ((await redis.hdel(k.persistedTrusted(), a.sha256)) === 0) return false;
      await replicated(k.persistedTrusted());
      return true;
    },

    /** How many documents the store holds. */
    size(): Promise<number> {
      return redis.zcard(k.persistedLastUse());
    },
  };
}
