/**
 * The gateway's graphql-yoga: the schema, the context of every operation (HTTP and WebSocket alike: who asks, the
 * services, the DataLoaders), error masking, GraphiQL (bundled, so it works offline), /healthz (/readyz is
 * http.ts'), and the plugins, in order:
 * - tracing.ts (with tracing on): each operation's span, and each refusal's;
 * - errors.ts#useBadRequestCode: BAD_USER_INPUT for every validation failure;
 * - body-limit.ts: the request body's size (uploads get more);
 * - multipart-subscriptions.ts: Apollo's multipart HTTP subscriptions;
 * - http-media-types.ts: what the Accept header allows (406 otherwise);
 * - incremental.ts: `@defer` and `@stream`;
 * - graphql-armor: the document's depth, cost, aliases, tokens and directives;
 * - maintenance.ts: MAINTENANCE while the gateway is in maintenance;
 * - revocation.ts: ends the SSE and multipart streams of a revoked session;
 * - shutdown.ts: ends the SSE and multipart streams when the gateway stops;
 * - metrics.ts (with GET /metrics on): the operations' figures;
 * - limits.ts (with rate limits on): the operations' rate limit, before parsing where it can;
 * - persisted-queries.ts: automatic persisted queries (APQ) and trusted documents;
 * - errors.ts#useErrorRequestIds: each error's request id, for the logs;
 * - scope-cache.ts: lets go of scope-auth's cache once a subscription started;
 * - refusals.ts: a refusal's HTTP status (and Retry-After) over SSE and JSON;
 * - graphql-sse.ts: graphql-sse's single-connection mode (PUT, then the stream, then operations).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaLogger } from 'graphql-yoga';
import type { Config } from '../config.js';
import { authenticate, type Context } from '../context.js';
import type { Logger } from '../logger.js';
import { schema } from '../schema/index.js';
import type { Services } from '../services/index.js';
import { maskError, requestIdOf, tagRequestId, useBadRequestCode, useErrorRequestIds } from './errors.js';
import type { GatewayMetrics } from './prometheus.js';
import { useBodyLimits } from './plugins/body-limit.js';
import { useGraphQLSseSingleConnection } from './plugins/graphql-sse.js';
import { useHttpMediaTypes } from './plugins/http-media-types.js';
import { useIncrementalDelivery } from './plugins/incremental.js';
import { useMultipartSubscriptions } from './plugins/multipart-subscriptions.js';
import { useOperationLimits, type RateLimitedContext } from './plugins/limits.js';
import { useMaintenanceMode } from './plugins/maintenance.js';
import { useOperationMetrics } from './plugins/metrics.js';
import { usePersistedQueries } from './plugins/persisted-queries.js';
import { useScopeCacheRelease } from './plugins/scope-cache.js';
import { useSessionRevocation } from './plugins/revocation.js';
import { useStreamsEndOnStop } from './plugins/shutdown.js';
import { useRefusalStatus } from './plugins/refusals.js';
import type { OperationTracing } from './plugins/tracing.js';

export const GRAPHQL_PATH = '/graphql';

/**
 * What the HTTP server (gateway/http.ts) and the WebSocket server (gateway/ws.ts) hand yoga for each operation.
 * It becomes the operation's context, extended with what `context` returns (which must not give these again: the
 * WebSocket's `log` is a getter, made on first use).
 */
export interface ServerContext extends RateLimitedContext {
  /** HTTP only. */
  req?: IncomingMessage;
  res?: ServerResponse;
  /** The client's address, when known. */
  address: string | undefined;
  requestId: string;
  log: Logger;
  /** WebSocket operations carry the token of `connection_init` here; HTTP reads the header. */
  authorization?: unknown;
}

/** What yoga's `context` adds to the ServerContext (the address it gives with a fallback). */
type OperationContext = Omit<Context, 'log' | 'requestId'>;

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
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      const [first, ...rest] = args;
      if (first instanceof Error) log[level]({ err: first, requestId: requestIdOf(first) }, first.message);
      else log[level]({ args: rest.length ? rest : undefined }, String(first));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function createGatewayYoga({
  config,
  services,
  log,
  prometheus,
  tracing,
  stopping,
}: {
  config: Config;
  services: Services;
  log: Logger;
  prometheus: GatewayMetrics;
  /** The operations' spans (plugins/tracing.ts); undefined: no tracing. */
  tracing?: OperationTracing;
  /** Aborted when the gateway stops: it ends the streams served over HTTP (plugins/shutdown.ts). */
  stopping: AbortSignal;
}) {
  return createYoga<ServerContext, OperationContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/healthz',
    landingPage: false,
    logging: yogaLogger(log),
    maskedErrors: { maskError },
    maxRequestBodySize: false, // useBodyLimits: uploads may be larger than other requests
    extraParamNames: ['documentId'], // a persisted document's hash (plugins/persisted-queries.ts)
    graphiql: { subscriptionsProtocol: 'WS', title: 'Redis in Action gateway', defaultQuery: GRAPHIQL_DEFAULT_QUERY },
    renderGraphiQL,
    context: async (server): Promise<OperationContext> => {
      const { request, requestId, address, authorization } = server;
      // The rate limit may have asked already (an HTTP request, before parsing).
      const { viewer, token, presentedToken, rejected } = await (
        server.authentication ?? authenticate(services, authorization ?? request.headers.get('authorization'))
      ).catch((err: unknown) => {
        tagRequestId(err, requestId);
        throw err;
      });
      return {
        viewer,
        token,
        presentedToken,
        rejected,
        services,
        address: address ?? 'unknown',
        loaders: services.loaders(viewer?.username ?? null),
      };
    },
    plugins: [
      ...(tracing ? [tracing.plugin] : []),
      useBadRequestCode(),
      useBodyLimits({
        // The multipart envelope around an upload gets 64 KiB beyond the file itself.
        uploads: config.accessLogs.uploadMaxBytes + 65_536,
        others: config.limits.requestBytes,
        // uploadAccessLog is for admins; the rate limit and the context reuse the caller's authentication.
        mayUpload: async (serverContext, request) => {
          const server = serverContext as RateLimitedContext;
          const { viewer } = await (server.authentication ??= authenticate(
            services,
            request.headers.get('authorization'),
          ));
          return viewer !== null && services.admins.isAdmin({ username: viewer.username });
        },
      }),
      // Before useHttpMediaTypes, which answers 406 to a stream that no processor took.
      useMultipartSubscriptions({ heartbeatMs: config.multipart.heartbeatMs, log }),
      useHttpMediaTypes(),
      useIncrementalDelivery(log),
      EnvelopArmorPlugin({
        maxDepth: { n: config.limits.depth },
        costLimit: { maxCost: config.limits.cost },
        maxAliases: { n: config.limits.aliases },
        maxTokens: { n: config.limits.tokens },
        maxDirectives: { n: 20 },
        blockFieldSuggestion: { enabled: config.env === 'production' },
      }),
      useMaintenanceMode(),
      useSessionRevocation(services.sessions),
      useStreamsEndOnStop(stopping),
      ...(prometheus.enabled ? [useOperationMetrics((timing) => services.metrics.record(timing), prometheus)] : []),
      ...(services.limits.limitsOperations
        ? [
            useOperationLimits(services, (early) => {
              if (!prometheus.enabled) return;
              prometheus.rateLimit('operations');
              // Refused before parsing: no execution reports it, so it is counted here as one would be.
              if (early)
                prometheus.refusedOperation(
                  services.metrics.record({ operation: early.operation, seconds: 0 }),
                  early.refusal.code,
                );
            }),
          ]
        : []),
      // After the limits: a document is registered only once its operation is admitted.
      usePersistedQueries(services),
      useErrorRequestIds(),
      useScopeCacheRelease(),
      useRefusalStatus(),
      useGraphQLSseSingleConnection({
        path: GRAPHQL_PATH,
        services,
        perClient: config.limits.sseReservationsPerClient,
        connectMs: config.limits.sseReservationConnectMs,
        maxOperations: config.websocket.maxSubscriptions,
        maxBodyBytes: config.limits.requestBytes,
        stopping,
      }),
    ],
  });
}

export type GatewayYoga = ReturnType<typeof createGatewayYoga>;
