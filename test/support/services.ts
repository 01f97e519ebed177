/** The services on the test Redis, without HTTP: for tests of a service's own behaviour. They dispose themselves. */
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import type { RedisClient } from '../../src/redis/clients.js';
import { createServices, type Services } from '../../src/services/index.js';
import { testConfig, testRedis } from './app.js';
import { disposeLater } from './dispose.js';
import type { TestRedis } from './redis-servers.js';

export interface TestServices {
  services: Services;
  redis: RedisClient;
  config: Config;
}

/** Services with a new key prefix (or `env`'s) on the test Redis (or `target`); `now` is the clock of their telemetry. */
export function startTestServices(
  env: Record<string, string> = {},
  now?: () => number,
  target?: TestRedis,
): TestServices {
  const config = testConfig(env, target);
  const log = createLogger(config.logLevel);
  const redis = testRedis(config, log, 'test-services');
  const services = createServices(redis, config, log, now);
  disposeLater(() => services.close());
  return { services, redis, config };
}
