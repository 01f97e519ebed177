/** Builds every service over one Redis client; services know nothing of GraphQL. */
import type { Config } from '../config.js';
import type { RedisClient } from '../redis/clients.js';
import { createKeys } from '../redis/keys.js';
import { OperationsService } from './operations.js';
import { SessionService } from './sessions.js';
import { UserService } from './users.js';

export type Services = ReturnType<typeof createServices>;

export function createServices(redis: RedisClient, config: Pick<Config, 'keyPrefix' | 'sessionTtlSeconds'>) {
  const keys = createKeys(config.keyPrefix);
  const sessions = new SessionService(redis, keys, config.sessionTtlSeconds);
  return {
    sessions,
    users: new UserService(redis, keys, sessions),
    operations: new OperationsService(redis, keys),
  };
}
