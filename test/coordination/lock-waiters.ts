/**
 * A child process for the lock's wake-up test: `clients` concurrent clients each take lock `name` `rounds` times
 * (a lease of LEASE_MS, a wait of WAIT_MS, far shorter), hold it a moment and release it. Prints one JSON line:
 * the fencing tokens it got, and how many acquires came back empty (their wait ran out).
 * Environment: REDIS_URL or REDIS_CLUSTER_NODES, KEY_PREFIX.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { closeRedisClient, createRedisClient } from '../../src/redis/clients.js';
import { createServices, type Services } from '../../src/services/index.js';

export const LEASE_MS = 60_000;
export const WAIT_MS = 20_000;

/** The loops of one process: the fencing tokens they got, and the acquires that found the lock held to the end. */
export async function takeTurns(
  services: Services,
  { name, clients, rounds }: { name: string; clients: number; rounds: number },
): Promise<{ fences: number[]; refused: number }> {
  const fences: number[] = [];
  let refused = 0;
  const loop = async (i: number) => {
    for (let round = 0; round < rounds; round++) {
      const lease = await services.locks.acquire({ name, leaseMs: LEASE_MS, waitMs: WAIT_MS });
      if (!lease) {
        refused++;
        continue;
      }
      fences.push((await services.locks.fence(lease))!);
      await sleep(i % 3); // releases land before, during and after other waiters' attempts
      await services.locks.release(lease);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, i) => loop(i)));
  return { fences, refused };
}

if (process.argv[1]?.endsWith('lock-waiters.ts')) {
  const [name, clients, rounds] = process.argv.slice(2);
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
  if (config.redis.kind === 'embedded') throw new Error('lock-waiters needs REDIS_URL or REDIS_CLUSTER_NODES');
  const log = createLogger('silent');
  const redis = createRedisClient(config.redis, log, 'lock-waiters');
  const services = createServices(redis, config, log);
  const result = await takeTurns(services, { name: name!, clients: Number(clients), rounds: Number(rounds) });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await services.close();
  await closeRedisClient(redis);
}
