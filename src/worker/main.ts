/**
 * `npm run worker`: one task worker process on the gateway's Redis (REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS,
 * or the embedded Redis of a gateway running on the same DATA_DIR). Stops gracefully on SIGTERM/SIGINT: stops taking
 * tasks, lets running ones finish for SHUTDOWN_TIMEOUT_MS, returns the rest to their queues, writes its telemetry
 * within what is left of SHUTDOWN_TIMEOUT_MS, exits 0 (exit 1 when the stop still runs 1.5 s past it).
 */
import { loadConfig } from '../config.js';
import { LogForward, createLogger } from '../logger.js';
import { closeRedisClient, createRedisClient } from '../redis/clients.js';
import { endpointOf } from '../redis/embedded.js';
import { createServices } from '../services/index.js';
import { gatewayLogSink } from '../services/telemetry/logs.js';
import { runProcess, type Stop } from '../run-process.js';
import { startWorker } from './start.js';

async function main(): Promise<Stop> {
  const config = loadConfig();
  const logForward = new LogForward();
  const log = createLogger(config.logLevel, logForward);
  const endpoint = await endpointOf(config.redis);
  const redis = createRedisClient(endpoint, log, 'worker');
  const services = createServices(redis, config, log);
  logForward.attach(gatewayLogSink(services.logs));
  const worker = startWorker({ services, config, log });

  return {
    async stop(signal) {
      log.info({ signal }, 'stopping');
      const started = performance.now();
      // As the gateway's stop: SHUTDOWN_TIMEOUT_MS for the tasks and what goes to Redis, and a hard deadline after it.
      const hardDeadline = setTimeout(() => {
        log.error('graceful stop took too long; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs + 1500);
      hardDeadline.unref();
      await worker.stop(config.shutdownTimeoutMs);
      await services.close(Math.max(0, config.shutdownTimeoutMs - (performance.now() - started)));
      await closeRedisClient(redis);
      clearTimeout(hardDeadline);
    },
  };
}

runProcess('worker', main);
