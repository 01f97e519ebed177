/**
 * buildApp(): the HTTP server with graphql-yoga and graphql-ws on the same path, sharing one envelop
 * (one context factory, one validation, the same plugins and limits). It does not listen; server.ts and the
 * tests do. Every request gets a request id (from `x-request-id` when sane, else a new UUID) that is echoed
 * back and carried by its log lines.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { DocumentNode, ExecutionArgs, GraphQLError, GraphQLSchema, parse as graphqlParse, validate as graphqlValidate } from 'graphql';
import type { SubscribePayload, Context as WsContext } from 'graphql-ws';
import { createYoga, useReadinessCheck, type YogaLogger } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from './config.js';
import { bearerToken, createLoaders, resolveViewer, type Context } from './context.js';
import { serveGraphQLOverWebSocket } from './gateway/ws.js';
import { graphQLError, maskError, requestIdOf, tagRequestId, useBadRequestCode, useErrorRequestIds } from './gateway/errors.js';
import type { LogForward, Logger } from './logger.js';
import { useBodyLimits } from './gateway/plugins/body-limit.js';
import { useHttpMediaTypes } from './gateway/plugins/http-media-types.js';
import { useMaintenanceMode } from './gateway/plugins/maintenance.js';
import { useOperationLimits } from './gateway/plugins/limits.js';
import { useOperationMetrics } from './gateway/plugins/metrics.js';
import { useSessionRevocation } from './gateway/plugins/revocation.js';
import { isReady, type RedisClient } from './redis/clients.js';
import { schema } from './schema/index.js';
import { createServices, type Services } from './services/index.js';
import { gatewayLogSink } from './services/telemetry/logs.js';

export const GRAPHQL_PATH = '/graphql';
/** graphql-ws close code for a bad, expired or revoked token (the protocol's "Forbidden"). */
export const CLOSE_FORBIDDEN = 4403;

interface ServerContext {
  req: IncomingMessage;
  res?: ServerResponse;
  requestId: string;
  log: Logger;
  /** WebSocket operations carry the token of `connection_init` here; HTTP reads the header. */
  authorization?: unknown;
}

export interface App {
  server: Server;
  services: Services;
  /** Stops accepting, closes sockets with 1001, waits for in-flight requests (forcing them after `timeoutMs`). */
  close(timeoutMs?: number): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

const GRAPHIQL_DEFAULT_QUERY = `# Sign up (or sign in), then put the token under Headers:
#   { "Authorization": "Bearer <token>" }
mutation SignUp {
  signUp(username: "alice", password: "correct horse") { token user { id username } }
}

query Me {
  me { id username }
  users(prefix: "a") { username }
  chats { id unreadCount lastMessageId members { username } }
}

mutation CreateChat {
  createChat(members: [], message: "hello", isPublic: true) { id }
}

# Every unread message of your chats, then new ones as they are sent; run it, then send from another tab.
subscription Messages {
  messageAdded { id chatId text sender { username } sentAt }
}
`;

function yogaLogger(log: Logger): YogaLogger {
  const at = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    const [first, ...rest] = args;
    if (first instanceof Error) log[level]({ err: first, requestId: requestIdOf(first) }, first.message);
    else log[level]({ args: rest.length ? rest : undefined }, String(first));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

async function pingWithin(redis: RedisClient, ms: number): Promise<boolean> {
  if (!isReady(redis)) return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([redis.ping().then((r) => r === 'PONG'), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Confirms receipt over a socket with numbered pings: a pong carrying n means the client has read every frame
 * sent before ping n. graphql-ws's own keep-alive pings carry no number and are ignored here.
 */
function receiptConfirmer(socket: WebSocket): () => Promise<void> {
  let sent = 0;
  let waiting: { n: number; resolve: () => void }[] = [];
  socket.on('pong', (data: Buffer) => {
    const n = Number(data.toString());
    if (!Number.isInteger(n) || n <= 0) return;
    waiting = waiting.filter((w) => (w.n <= n ? (w.resolve(), false) : true));
  });
  socket.once('close', () => (waiting = [])); // never resolved: the streams waiting on them stop with the socket
  return () =>
    new Promise<void>((resolve) => {
      const n = ++sent;
      waiting.push({ n, resolve });
      socket.ping(String(n));
    });
}

export function buildApp(deps: { config: Config; redis: RedisClient; log: Logger; logForward?: LogForward }): App {
  const { config, redis, log } = deps;
  const services = createServices(redis, config, log);
  deps.logForward?.attach(gatewayLogSink(services.logs));

  const yoga = createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/healthz',
    landingPage: false,
    logging: yogaLogger(log),
    maskedErrors: { maskError },
    maxRequestBodySize: false, // useBodyLimits: uploads may be larger than other requests
    graphiql: { subscriptionsProtocol: 'WS', title: 'Redis in Action gateway', defaultQuery: GRAPHIQL_DEFAULT_QUERY },
    renderGraphiQL,
    context: async ({ req, request, requestId, log: requestLog, authorization }): Promise<Context> => {
      const token = bearerToken(authorization ?? request.headers.get('authorization'));
      const viewer = await resolveViewer(services, token).catch((err: unknown) => {
        tagRequestId(err, requestId);
        throw err;
      });
      return {
        viewer,
        token: viewer ? (token ?? null) : null,
        services,
        log: requestLog,
        requestId,
        address: req.socket.remoteAddress ?? 'unknown',
        loaders: createLoaders(services, viewer),
      };
    },
    plugins: [
      useBadRequestCode(),
      // The multipart envelope around an upload gets 64 KiB beyond the file itself.
      useBodyLimits({ uploads: config.accessLogs.uploadMaxBytes + 65_536, others: config.limits.requestBytes }),
      useHttpMediaTypes(),
      EnvelopArmorPlugin({
        maxDepth: { n: config.limits.depth },
        costLimit: { maxCost: config.limits.cost },
        maxAliases: { n: config.limits.aliases },
        maxTokens: { n: config.limits.tokens },
        maxDirectives: { n: 20 },
        blockFieldSuggestion: { enabled: config.env === 'production' },
      }),
      useReadinessCheck({ endpoint: '/readyz', check: () => pingWithin(redis, 1000) }),
      useMaintenanceMode(),
      useSessionRevocation(services.sessions),
      useOperationMetrics((operation, seconds) => services.metrics.record(operation, seconds)),
      ...(services.limits.limitsOperations ? [useOperationLimits(services.limits)] : []),
      useErrorRequestIds(),
    ],
  });

  // A request (headers and body) must arrive within REQUEST_TIMEOUT_MS, checked every second at most: a client that
  // trickles bytes gets 408 instead of holding a socket for Node's default five minutes.
  const requestTimeout = config.limits.requestTimeoutMs;
  const serverOptions = {
    requestTimeout,
    headersTimeout: Math.min(requestTimeout, 60_000),
    connectionsCheckingInterval: Math.min(1000, Math.ceil(requestTimeout / 4)),
  };
  const server = createServer(serverOptions, (req, res) => {
    const header = req.headers['x-request-id'];
    const requestId = typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
    const started = performance.now();
    res.setHeader('x-request-id', requestId);
    res.once('finish', () =>
      log.info(
        { requestId, method: req.method, url: req.url, status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10 },
        'request',
      ),
    );
    void yoga(req, res, { req, res, requestId, log: log.child({ requestId }) });
  });

  server.maxConnections = config.limits.connections;

  const wss = new WebSocketServer({ server, path: GRAPHQL_PATH, maxPayload: config.limits.requestBytes });
  type Extra = { socket: WebSocket; request: IncomingMessage; requestId?: string; confirmReceipt?: () => Promise<void> };
  type EnvelopedArgs = ExecutionArgs & {
    rootValue: { execute: (a: ExecutionArgs) => unknown; subscribe: (a: ExecutionArgs) => unknown };
  };
  const connectionLog = (ctx: WsContext<Record<string, unknown> | undefined, Extra>) =>
    log.child({ requestId: (ctx.extra.requestId ??= randomUUID()), transport: 'ws' });

  const ws = serveGraphQLOverWebSocket<Record<string, unknown> | undefined, Extra>(
    {
      execute: (args) => (args as EnvelopedArgs).rootValue.execute(args) as never,
      onNext: (ctx) => {
        // Throwing ends this operation (graphql-ws returns its stream), so nothing more is read for a socket
        // that is going away.
        if (ctx.extra.socket.readyState !== ctx.extra.socket.OPEN) throw new Error('socket is closing');
      },
      subscribe: (args) => (args as EnvelopedArgs).rootValue.subscribe(args) as never,
      onConnect: async (ctx) => {
        const token = bearerToken(ctx.connectionParams?.authorization);
        if (token === undefined) return true; // anonymous connections may run public operations
        const viewer = token ? await resolveViewer(services, token) : null;
        if (!viewer) {
          connectionLog(ctx).info('websocket refused: bad or expired token');
          return false; // closes the socket with 4403 Forbidden
        }
        // A revocation (heard from any process) or a periodic check finding the session expired closes the socket.
        const { socket } = ctx.extra;
        const unwatch = services.sessions.watch(token!, () => socket.close(CLOSE_FORBIDDEN, 'Forbidden: session revoked or expired'));
        socket.once('close', unwatch);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const opLog = connectionLog(ctx).child({ operationId: id });
        // graphql-ws has already registered this operation when onSubscribe runs.
        if (Object.keys(ctx.subscriptions).length > config.websocket.maxSubscriptions) {
          return [graphQLError('BUSY', `at most ${config.websocket.maxSubscriptions} operations per connection`)];
        }
        const initialContext: ServerContext & { params: SubscribePayload } = {
          req: ctx.extra.request,
          requestId: opLog.bindings().requestId as string,
          log: opLog,
          authorization: ctx.connectionParams?.authorization ?? '',
          params: payload,
        };
        const enveloped = yoga.getEnveloped(initialContext);
        // envelop types parse and validate loosely; they are graphql-js's functions wrapped by the plugins.
        const parse = enveloped.parse as typeof graphqlParse;
        const validate = enveloped.validate as typeof graphqlValidate;
        const schema = enveloped.schema as GraphQLSchema;
        let document: DocumentNode;
        try {
          // Both may throw: parse on syntax and token limits, validate on graphql-armor's limits.
          document = parse(payload.query);
          const errors = validate(schema, document);
          if (errors.length > 0) return errors;
        } catch (err) {
          return [maskError(err, 'Unexpected error.') as GraphQLError];
        }
        let contextValue: Context;
        try {
          contextValue = await enveloped.contextFactory();
        } catch (err) {
          // Redis unreachable while resolving the token: an error for this operation, the socket stays open.
          opLog.error({ err }, 'websocket operation context failed');
          return [maskError(err, 'Unexpected error.') as GraphQLError];
        }
        if (bearerToken(ctx.connectionParams?.authorization) && !contextValue.viewer) {
          // The token this socket was opened with has been revoked or has expired.
          ctx.extra.socket.close(CLOSE_FORBIDDEN, 'Forbidden: session revoked or expired');
          return [graphQLError('UNAUTHENTICATED', 'session revoked or expired')];
        }
        contextValue.confirmReceipt = ctx.extra.confirmReceipt ??= receiptConfirmer(ctx.extra.socket);
        return {
          schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue,
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
      },
    },
    wss,
    { sendTimeoutMs: config.websocket.sendTimeoutMs, log },
  );

  return {
    server,
    services,
    async close(timeoutMs = 8000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await ws.dispose(); // closes every socket with 1001 Going away
      await services.close();
      // Connections whose in-flight request finishes become idle keep-alive connections: close them as they do.
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
    },
  };
}
