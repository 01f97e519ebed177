/** Starts the product's task worker over a set of services (the gateway's own, or `npm run worker`'s). */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { RedisClient } from '../redis/clients.js';
import type { Services } from '../services/index.js';
import { Worker } from './worker.js';

export function startWorker(
  redis: RedisClient,
  services: Services,
  config: Pick<Config, 'queues'>,
  log: Logger,
): Worker {
  const worker = new Worker(redis, services, { handlers: services.handlers, jobs: services.jobs }, config.queues, log);
  worker.start();
  return worker;
}
