/**
 * buildApp(): the services, graphql-yoga, the HTTP server and graphql-ws on its path, and GET /metrics over them,
 * joined. It does not listen; server.ts and the tests do.
 */
import type { Server } from 'node:http';
import type { Config } from './config.js';
import { closeHttpServer, createHttpServer } from './gateway/http.js';
import { operationTracing } from './gateway/plugins/tracing.js';
import { serveWebSocket } from './gateway/ws.js';
import { GatewayMetrics } from './gateway/prometheus.js';
import { createGatewayYoga } from './gateway/yoga.js';
import type { LogForward, Logger } from './logger.js';
import type { RedisClient } from './redis/clients.js';
import { createServices, type Services } from './services/index.js';
import { gatewayLogSink } from './services/telemetry/logs.js';

export interface App {
  server: Server;
  services: Services;
  /**
   * Stops accepting, ends the subscriptions served over HTTP (SSE: `complete`; multipart: the closing boundary),
   * closes sockets with 1001, waits for in-flight requests (closing them after `timeoutMs`); once.
   */
  close(timeoutMs?: number): Promise<void>;
}

export function buildApp({
  config,
  redis,
  log,
  logForward,
}: {
  config: Config;
  redis: RedisClient;
  log: Logger;
  logForward?: LogForward;
}): App {
  const services = createServices(redis, config, log);
  logForward?.attach(gatewayLogSink(services.logs));
  const prometheus = new GatewayMetrics({ config, services, log });
  // With tracing off, nothing of OpenTelemetry is loaded (src/tracing.ts imports it).
  const tracing = config.tracing && import('./tracing.js').then((t) => t.startTracing(config.tracing!, log));
  tracing?.catch((err: unknown) => log.error({ err }, 'tracing could not start: operations fail until restarted'));
  const operations = tracing && operationTracing(tracing.then((t) => t.provider));
  const stopping = new AbortController();
  const yoga = createGatewayYoga({ config, services, log, prometheus, tracing: operations, stopping: stopping.signal });
  const server = createHttpServer(yoga, config.limits, log, prometheus, () => services.ops.ready({ timeoutMs: 1000 }));
  const ws = serveWebSocket(server, { yoga, services, config, log, prometheus, tracing: operations });
  prometheus.watch({ server, sockets: () => ws.stats() });
  services.processFigures.attach((names) => prometheus.samples(names));
  let closing: Promise<void> | undefined;
  return {
    server,
    services,
    close(timeoutMs = 8000) {
      closing ??= (async () => {
        stopping.abort(); // ends the streams served over HTTP, which the close then need not wait for
        const http = closeHttpServer(server, timeoutMs, log);
        await ws.dispose();
        await services.close(timeoutMs);
        await http;
        await (await tracing?.catch(() => undefined))?.stop();
      })();
      return closing;
    },
  };
}
