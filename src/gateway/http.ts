/**
 * The HTTP server in front of yoga: a request id per request (from `x-request-id` when sane, else a new UUID),
 * echoed back and carried by its log line; requests that must arrive whole within REQUEST_TIMEOUT_MS (checked every
 * second at most, so a client trickling bytes gets 408 rather than holding a socket for Node's default five
 * minutes); at most MAX_CONNECTIONS connections; `GET /metrics` (gateway/prometheus.ts) and `/readyz` (200 while
 * Redis answers a PING within a second, else 503), beside yoga, so that no GraphQL request pays for matching their
 * paths; GraphiQL's page compressed once and cached (graphiql-page.ts), at /graphql and /graphql/ alike; JSON answers
 * of COMPRESS_MIN_BYTES or more compressed (br or gzip, by Accept-Encoding, with the `compression` middleware, which
 * a request accepting no encoding it serves never enters), never an event stream or a multipart one, which must not
 * wait for a compressor's buffer; and a graceful close.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import compression from 'compression';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { serveDashboard } from './dashboard.js';
import { graphiqlPage, wantsGraphiQL } from './graphiql-page.js';
import { METRICS_PATH, type GatewayMetrics } from './prometheus.js';
import { GRAPHQL_PATH, type GatewayYoga } from './yoga.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
export const READY_PATH = '/readyz';

/** `url` is `path`, or `path` and a query (no string made: every request asks this of several paths). */
const isPath = (url: string | undefined, path: string) =>
  url !== undefined && url.startsWith(path) && (url.length === path.length || url[path.length] === '?');

/** Answers compressed when large: JSON only (an event stream or a multipart stream goes out as it is written). */
const JSON_ANSWER = /^application\/(?:graphql-response\+)?json\b/;
const compressible = (_req: IncomingMessage, res: ServerResponse) =>
  JSON_ANSWER.test(String(res.getHeader('content-type')));
/**
 * A request whose Accept-Encoding may name an encoding the middleware serves (it decides, by q-values); any other
 * skips the middleware's wrapping of the response, answered as it would answer it: uncompressed, with the Vary.
 */
const MAY_COMPRESS = /gzip|deflate|br|\*/i;

function serveGraphQL(yoga: GatewayYoga, req: IncomingMessage, res: ServerResponse, requestId: string, log: Logger) {
  void yoga(req, res, { req, res, address: req.socket.remoteAddress, requestId, log: log.child({ requestId }) });
}

export function createHttpServer(
  yoga: GatewayYoga,
  limits: Config['limits'],
  log: Logger,
  prometheus: GatewayMetrics,
  ready: () => Promise<boolean>,
): Server {
  const requestTimeout = limits.requestTimeoutMs;
  const options = {
    requestTimeout,
    headersTimeout: Math.min(requestTimeout, 60_000),
    connectionsCheckingInterval: Math.min(1000, Math.ceil(requestTimeout / 4)),
  };
  const compress = compression({ threshold: limits.compressMinBytes, filter: compressible as never });
  const graphiql = graphiqlPage(async () => {
    const page = await yoga.fetch(
      `http://localhost${GRAPHQL_PATH}`,
      { headers: { accept: 'text/html' } },
      {
        address: undefined,
        requestId: 'graphiql',
        log,
      },
    );
    if (!page.ok) throw new Error(`GraphiQL's page: status ${page.status}`);
    return page.text();
  });
  /** What a failed non-GraphQL answer (/metrics, GraphiQL) logs and sends: a 500 without internals. */
  const failed = (res: ServerResponse, requestId: string, what: string) => (err: unknown) => {
    log.error({ err, requestId }, what);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('Unexpected error.\n');
  };
  const server = createServer(options, (req, res) => {
    const header = req.headers['x-request-id'];
    const requestId = typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
    const started = performance.now();
    res.setHeader('x-request-id', requestId);
    res.once('finish', () => {
      if (prometheus.enabled) prometheus.response(res.statusCode);
      log.info(
        {
          requestId,
          method: req.method,
          url: req.url,
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    });
    // Not GraphQL: no operation, no rate limit; the scrape reads what is counted in memory (and the domains' figures).
    if (isPath(req.url, READY_PATH)) {
      ready().then(
        (up) => res.writeHead(up ? 200 : 503).end(),
        () => res.writeHead(503).end(),
      );
      return;
    }
    if (isPath(req.url, METRICS_PATH)) {
      prometheus.serve(req, res).catch(failed(res, requestId, 'GET /metrics failed'));
      return;
    }
    if (serveDashboard(req, res)) return;
    if ((isPath(req.url, GRAPHQL_PATH) || isPath(req.url, `${GRAPHQL_PATH}/`)) && wantsGraphiQL(req)) {
      graphiql(req, res).catch(failed(res, requestId, 'serving GraphiQL failed'));
      return;
    }
    const encodings = req.headers['accept-encoding'];
    if (encodings === undefined || !MAY_COMPRESS.test(encodings)) {
      res.setHeader('vary', 'Accept-Encoding');
      serveGraphQL(yoga, req, res, requestId, log);
      return;
    }
    // Typed for Express; it needs only Node's request and response.
    compress(req as never, res as never, () => serveGraphQL(yoga, req, res, requestId, log));
  });
  server.maxConnections = limits.connections;
  return server;
}

/** Stops accepting and waits for in-flight requests, closing idle keep-alive connections as they appear; after `timeoutMs`, closes the rest. */
export async function closeHttpServer(server: Server, timeoutMs: number, log: Logger): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log.warn('in-flight requests still running at the shutdown deadline; closing them');
      server.closeAllConnections();
      resolve();
    }, timeoutMs);
  });
  await Promise.race([closed, forced]);
  clearInterval(sweeper);
  clearTimeout(timer);
}
