/**
 * A child process for the multi-process lock and semaphore tests: `clients` concurrent clients of this process
 * contend for one lock or semaphore of the services on the test Redis (REDIS_URL or REDIS_CLUSTER_NODES, and
 * KEY_PREFIX, from the environment). Prints one JSON line with what it saw, then exits.
 *   lock-counter <clients> <increments>: each client increments a plain GET/SET counter under the lock.
 *   semaphore <clients> <attempts>: each client tries the semaphore (limit 3); inside, it counts how many are in.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { closeRedisClient, createRedisClient } from '../../src/redis/clients.js';
import { createServices } from '../../src/services/index.js';

const [mode, clientsArg, countArg] = process.argv.slice(2);
const clients = Number(clientsArg);
const count = Number(countArg);
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
if (config.redis.kind === 'embedded') throw new Error('contender needs REDIS_URL or REDIS_CLUSTER_NODES');
const log = createLogger('silent');
const redis = createRedisClient(config.redis, log, 'contender');
const services = createServices(redis, config, log);
const key = (name: string) => `${config.keyPrefix}contended:{${name}}`;

let max = 0;
let acquired = 0;

async function lockCounter(): Promise<void> {
  for (let i = 0; i < count; i++) {
    await services.locks.withLock({ name: 'counter', leaseMs: 10_000, waitMs: 120_000 }, async () => {
      const value = Number((await redis.get(key('counter'))) ?? '0');
      await redis.set(key('counter'), String(value + 1));
    });
  }
}

async function semaphore(): Promise<void> {
  for (let i = 0; i < count; i++) {
    const holder = await services.semaphores.acquire({ name: 'pool', limit: 3, timeoutMs: 10_000 });
    if (!holder) {
      await sleep(1);
      continue;
    }
    acquired++;
    max = Math.max(max, await redis.incr(key('inside')));
    await sleep(2);
    await redis.decr(key('inside'));
    await services.semaphores.release({ name: 'pool', holder });
  }
}

const run = mode === 'lock-counter' ? lockCounter : mode === 'semaphore' ? semaphore : undefined;
if (!run) throw new Error(`unknown mode ${mode}`);
await Promise.all(Array.from({ length: clients }, () => run()));
process.stdout.write(`${JSON.stringify({ max, acquired })}\n`);
await services.close();
await closeRedisClient(redis);
