/** Every domain's keys under one prefix, for tests and benchmarks that look at Redis directly. */
import { accessLogKeys } from '../../src/redis/access-logs/keys.js';
import { chatKeys } from '../../src/redis/chat/keys.js';
import { coordinationKeys } from '../../src/redis/coordination/keys.js';
import { documentKeys } from '../../src/redis/documents/keys.js';
import { geoKeys } from '../../src/redis/geo/keys.js';
import { keyspace } from '../../src/redis/keys.js';
import { opsKeys } from '../../src/redis/ops/keys.js';
import { telemetryKeys } from '../../src/redis/telemetry/keys.js';
import { userKeys } from '../../src/redis/users/keys.js';

export function keysOf(prefix: string) {
  const space = keyspace(prefix);
  return {
    ...userKeys(space),
    ...chatKeys(space),
    ...coordinationKeys(space),
    ...telemetryKeys(space),
    ...opsKeys(space),
    ...geoKeys(space),
    ...accessLogKeys(space),
    ...documentKeys(space),
  };
}
