/** Every domain's keys under one prefix, for tests and benchmarks that look at Redis directly. */
import { domainKeys } from '../../src/redis/domain-keys.js';
import { keyspace } from '../../src/redis/keys.js';

export function keysOf(prefix: string) {
  return domainKeys(keyspace(prefix));
}
