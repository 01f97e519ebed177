/** Starts the product's task worker over a set of services (the gateway's own, or `npm run worker`'s). */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import { Worker } from './worker.js';

export function startWorker({
  services,
  config,
  log,
}: {
  services: Services;
  config: Pick<Config, 'queues'>;
  log: Logger;
}): Worker {
  const worker = new Worker({ ...services, options: config.queues, log });
  worker.start();
  return worker;
}
