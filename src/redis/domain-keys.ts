/**
 * Every domain's keys under one keyspace, for what reads Redis directly (tests, benchmarks). Each domain's commands
 * name their own keys (redis/<domain>/keys.ts); this joins them, and a name two domains give throws. A domain's
 * keys.ts missing here fails test/redis/keys.test.ts.
 */
import { joinNamed } from '../compose.js';
import { accessLogKeys } from './access-logs/keys.js';
import { adKeys } from './ads/keys.js';
import { cacheKeys } from './cache/keys.js';
import { chatKeys } from './chat/keys.js';
import { coordinationKeys } from './coordination/keys.js';
import { documentKeys } from './documents/keys.js';
import { geoKeys } from './geo/keys.js';
import type { Keyspace } from './keys.js';
import { opsKeys } from './ops/keys.js';
import { persistedQueryKeys } from './persisted-queries/keys.js';
import { telemetryKeys } from './telemetry/keys.js';
import { userKeys } from './users/keys.js';

/** The factories joined, by the name of their module's folder (what the wall test compares with the folders). */
export const KEY_FACTORIES = {
  'access-logs': accessLogKeys,
  ads: adKeys,
  cache: cacheKeys,
  chat: chatKeys,
  coordination: coordinationKeys,
  documents: documentKeys,
  geo: geoKeys,
  ops: opsKeys,
  'persisted-queries': persistedQueryKeys,
  telemetry: telemetryKeys,
  users: userKeys,
};

type Factories = typeof KEY_FACTORIES;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

export type DomainKeys = Intersection<ReturnType<Factories[keyof Factories]>>;

export function domainKeys(space: Keyspace): DomainKeys {
  return joinNamed<DomainKeys>(
    'key',
    Object.values(KEY_FACTORIES).map((factory) => factory(space)),
  );
}
