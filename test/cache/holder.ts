/**
 * A child process for test/cache/cache.test.ts: the services on the test Redis (REDIS_URL or REDIS_CLUSTER_NODES,
 * and KEY_PREFIX, from the environment) ask cache `stampede` for key argv[2] with a computation that never ends; it
 * prints "computing" once it holds the entry's lock, and waits to be killed.
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createRedisClient } from '../../src/redis/clients.js';
import { createServices } from '../../src/services/index.js';

const key = process.argv[2]!;
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
if (config.redis.kind === 'embedded') throw new Error('the holder needs REDIS_URL or REDIS_CLUSTER_NODES');
const log = createLogger('silent');
const services = createServices(createRedisClient(config.redis, log, 'holder'), config, log);
const cache = services.caches.cache<string>({ name: 'stampede', ttlMs: 60_000 });
void cache.get({
  key,
  compute: () => {
    process.stdout.write('computing\n');
    return new Promise<string>(() => undefined);
  },
});
