/**
 * Entry point (`npm start`): reads the configuration, starts the embedded Redis when no external one is
 * configured, serves the app, runs a task worker (unless WORKER=off), and stops gracefully on SIGTERM/SIGINT: stop
 * accepting, close sockets with 1001, end the subscriptions over HTTP (SSE: `complete`; multipart: the closing
 * boundary), finish in-flight requests and tasks (unfinished tasks go back to their queues), close Redis, stop the
 * embedded Redis, exit 0.
 */
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './app.js';
import { LogForward, createLogger } from './logger.js';
import { checkEndpoint, closeRedisClient, createRedisClient, type RedisEndpoint } from './redis/clients.js';
import { startEmbeddedRedis, type EmbeddedRedis } from './redis/embedded.js';
import { runProcess, type Stop } from './run-process.js';
import { startWorker } from './worker/start.js';

async function main(): Promise<Stop> {
  const config = loadConfig();
  const logForward = new LogForward();
  const log = createLogger(config.logLevel, logForward);

  let embedded: EmbeddedRedis | undefined;
  let endpoint: RedisEndpoint;
  if (config.redis.kind === 'embedded') {
    embedded = await startEmbeddedRedis({
      ...config.redis,
      log,
      // A supervisor (systemd, Kubernetes) restarts the whole gateway, Redis with it.
      onGiveUp: (reason) => {
        log.fatal(reason);
        process.exit(1);
      },
    });
    endpoint = { kind: 'socket', path: embedded.socketPath };
  } else {
    endpoint = config.redis;
    await checkEndpoint(endpoint);
  }
  const redis = createRedisClient(endpoint, log);
  const app = buildApp({ config, redis, log, logForward });

  try {
    await new Promise<void>((resolve, reject) => {
      app.server.once('error', reject);
      app.server.listen(config.port, config.host, () => {
        app.server.off('error', reject);
        resolve();
      });
    });
    // Once listening, an error of the server (EMFILE on accept) is logged; it does not stop the gateway.
    app.server.on('error', (err) => log.error({ err }, 'http server error'));
  } catch (err) {
    await app.close(0);
    await closeRedisClient(redis);
    await embedded?.stop();
    throw listenError(err, config);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ url: `http://${config.host}:${port}/graphql`, redis: config.redis.kind }, 'gateway listening');
  // WORKER=off leaves tasks (scheduled messages) to `npm run worker` processes.
  const worker = config.worker ? startWorker({ services: app.services, config, log }) : undefined;

  const stop = async (signal: NodeJS.Signals) => {
    log.info({ signal }, 'stopping');
    embedded?.draining();
    const started = performance.now();
    const done = (what: string) => log.info({ ms: Math.round(performance.now() - started) }, what);
    const hardDeadline = setTimeout(() => {
      log.error('graceful stop took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 1500);
    hardDeadline.unref();
    await Promise.all([
      worker?.stop(config.shutdownTimeoutMs).then(() => done('worker stopped')),
      app.close(config.shutdownTimeoutMs).then(() => done('http and websockets closed')),
    ]);
    await closeRedisClient(redis);
    // The embedded Redis persists as it stops, under its own bound (killed after 8 s); the deadline above is the gateway's.
    clearTimeout(hardDeadline);
    await embedded?.stop();
    done('stopped');
  };
  // A second signal: the drain is abandoned, but the embedded Redis and its files are not left behind.
  return { stop, stopNow: async () => embedded?.stopNow() };
}

/** What to do when the gateway cannot listen: one line naming the setting to change. */
function listenError(err: unknown, { port, host }: { port: number; host: string }): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new ConfigError(
      `port ${port} on ${host} is in use (another gateway?): stop it, or choose a free port with PORT=`,
    );
  if (code === 'EACCES')
    return new ConfigError(`port ${port} needs privileges this user lacks: choose a port above 1023 with PORT=`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new ConfigError(`HOST=${host} is not an address of this machine: set HOST= to one (0.0.0.0 for all)`);
  return err instanceof Error ? err : new Error(String(err));
}

runProcess('gateway', main);
