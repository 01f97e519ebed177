/**
 * graphql-ws on the HTTP server's path, through yoga's envelop (the same parse, validation, context and plugins as
 * HTTP). A socket opened with a token is watched: its revocation (heard from any process) or the expiry of its
 * session closes it with 4403. Operations per socket are bounded; `markRead: true` counts what the client confirmed.
 * A subscribe message may name a persisted query by its hash alone (APQ, or a trusted document with PERSISTED_ONLY).
 * GET /metrics counts the sockets and their live subscriptions when it is scraped, nothing per message. With tracing
 * on, an operation refused here before it ran gets its span (plugins/tracing.ts), and one's `extensions` may carry
 * the caller's `traceparent`.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import {
  getOperationAST,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLError,
  type GraphQLSchema,
  type parse as graphqlParse,
  type validate as graphqlValidate,
} from 'graphql';
import { isAsyncIterable } from 'graphql-yoga';
import type { SubscribePayload, Context as WsContext } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../config.js';
import { authenticate, type Context } from '../context.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services/index.js';
import { graphQLError, maskError } from './errors.js';
import { persistedDocument, persistedId, type WithParams } from './plugins/persisted-queries.js';
import type { OperationTracing, TracedContext } from './plugins/tracing.js';
import type { GatewayMetrics, SocketStats } from './prometheus.js';
import { serveGraphQLOverWebSocket, type SocketExtra } from './sockets.js';
import { GRAPHQL_PATH, type GatewayYoga, type ServerContext } from './yoga.js';

/** graphql-ws close code for a bad, expired or revoked token (the protocol's "Forbidden"). */
export const CLOSE_FORBIDDEN = 4403;

type Extra = SocketExtra & { requestId?: string; confirmReceipt?: () => Promise<void> };
type Params = Record<string, unknown> | undefined;
type EnvelopedArgs = ExecutionArgs & {
  rootValue: { execute: (a: ExecutionArgs) => unknown; subscribe: (a: ExecutionArgs) => unknown };
};

/**
 * Confirms receipt over a socket with numbered pings: a pong carrying n means the client has read every frame
 * sent before ping n. The keep-alive's pings carry no number and are ignored here.
 */
function receiptConfirmer(socket: WebSocket): () => Promise<void> {
  let sent = 0;
  let waiting: { n: number; resolve: () => void }[] = [];
  socket.on('pong', (data: Buffer) => {
    const n = Number(data.toString());
    if (!Number.isInteger(n) || n <= 0) return;
    waiting = waiting.filter((w) => (w.n <= n ? (w.resolve(), false) : true));
  });
  socket.on('close', () => (waiting = [])); // never resolved: the streams waiting on them stop with the socket
  return () =>
    new Promise<void>((resolve) => {
      const n = ++sent;
      waiting.push({ n, resolve });
      socket.ping(String(n));
    });
}

/**
 * What a WebSocket operation hands yoga, which extends it into the operation's context, and a live subscription
 * keeps for its whole life. A class, not an object literal: V8 makes a literal with a getter a dictionary (some
 * 450 bytes more per subscription); this one stays in fast mode. Its logger is made on first use, as most
 * operations never log.
 */
class SocketOperationContext implements ServerContext, TracedContext {
  private opLog: Logger | undefined = undefined;

  constructor(
    readonly address: string | undefined,
    readonly requestId: string,
    readonly authorization: unknown,
    private readonly parentLog: Logger,
    private readonly operationId: string,
    /** With tracing on, the subscribe message's extensions: a `traceparent` there continues the caller's trace. */
    readonly traceCarrier: unknown,
  ) {}

  get log(): Logger {
    return (this.opLog ??= this.parentLog.child({
      requestId: this.requestId,
      transport: 'ws',
      operationId: this.operationId,
    }));
  }
}

export function serveWebSocket(
  server: Server,
  {
    yoga,
    services,
    config,
    log,
    prometheus,
    tracing,
  }: {
    yoga: GatewayYoga;
    services: Services;
    config: Config;
    log: Logger;
    prometheus: GatewayMetrics;
    /** Spans for the operations refused here, before they ran; undefined: no tracing. */
    tracing?: OperationTracing;
  },
): { dispose(): Promise<void>; stats(): SocketStats } {
  const wss = new WebSocketServer({ server, path: GRAPHQL_PATH, maxPayload: config.limits.requestBytes });
  // ws re-emits the HTTP server's errors (a port in use); the server's owner handles and logs them (server.ts).
  wss.on('error', () => undefined);
  const requestIdOf = (ctx: WsContext<Params, Extra>) => (ctx.extra.requestId ??= randomUUID());
  const forbidden = (socket: WebSocket) => socket.close(CLOSE_FORBIDDEN, 'Forbidden: session revoked or expired');
  /** Each acknowledged socket's graphql-ws context: GET /metrics counts the live subscriptions in them. */
  const contexts = new WeakMap<WebSocket, WsContext<Params, Extra>>();
  /** Errors of operations refused before they ran (parse, validation, persisted query), for GET /metrics. */
  const refused = (errors: readonly GraphQLError[]) => {
    if (prometheus.enabled) prometheus.refusedRequest(errors);
    return errors;
  };

  /** A subscribe message's operation, ready to run, or the errors it is refused with. */
  const admit = async (
    ctx: WsContext<Params, Extra>,
    id: string,
    payload: SubscribePayload,
  ): Promise<ExecutionArgs | readonly GraphQLError[]> => {
    // graphql-ws has already registered this operation when onSubscribe runs.
    if (Object.keys(ctx.subscriptions).length > config.websocket.maxSubscriptions) {
      return [graphQLError('BUSY', `at most ${config.websocket.maxSubscriptions} operations per connection`)];
    }
    const initialContext = new SocketOperationContext(
      ctx.extra.address,
      requestIdOf(ctx),
      ctx.connectionParams?.authorization ?? '',
      log,
      id,
      tracing && payload.extensions, // kept for the subscription's life: only when it is read
    );
    const enveloped = yoga.getEnveloped(initialContext);
    // envelop types parse and validate loosely; they are graphql-js's functions wrapped by the plugins.
    const parse = enveloped.parse as typeof graphqlParse;
    const validate = enveloped.validate as typeof graphqlValidate;
    const schema = enveloped.schema as GraphQLSchema;
    let document: DocumentNode;
    let query = payload.query;
    const persisted = persistedId(payload) !== undefined;
    try {
      // A hash-only message (urql's persistedExchange for subscriptions): the registered document, or
      // PersistedQueryNotFound, on which the client sends it again with its query. With PERSISTED_ONLY=on, every
      // message: a trusted document's hash, or a whole document from an admin.
      if (persisted || services.trustedDocuments.only) {
        const viewer = async () => (await authenticate(services, initialContext.authorization)).viewer;
        query = (await persistedDocument(services, payload, viewer)) ?? '';
      }
      // Both may throw: parse on syntax and token limits, validate on graphql-armor's limits.
      document = parse(query);
      const errors = validate(schema, document);
      if (errors.length > 0) return refused(errors);
      // Several operations and no operationName, or a name not in the document: graphql-ws would answer it without
      // a code. HTTP's answer (yoga's).
      if (!getOperationAST(document, payload.operationName))
        return refused([graphQLError('BAD_USER_INPUT', 'Could not determine what operation to execute.')]);
    } catch (err) {
      return refused([maskError(err, 'Unexpected error.') as GraphQLError]);
    }
    let contextValue: Context;
    try {
      contextValue = await enveloped.contextFactory();
    } catch (err) {
      // Redis unreachable while resolving the token: an error for this operation, the socket stays open.
      initialContext.log.error({ err }, 'websocket operation context failed');
      return [maskError(err, 'Unexpected error.') as GraphQLError];
    }
    if (contextValue.rejected) {
      // The token this socket was opened with has been revoked or has expired.
      forbidden(ctx.extra.socket);
      return [graphQLError('UNAUTHENTICATED', 'session revoked or expired')];
    }
    contextValue.confirmReceipt = ctx.extra.confirmReceipt ??= receiptConfirmer(ctx.extra.socket);
    // What the persisted-query plugin registers once the operation is admitted, as over HTTP.
    if (persisted) (contextValue as Context & WithParams).params = { query, extensions: payload.extensions };
    return {
      schema,
      operationName: payload.operationName,
      document,
      variableValues: payload.variables,
      contextValue,
      rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
    };
  };

  const served = serveGraphQLOverWebSocket<Params, Extra>(
    {
      execute: (args) => (args as EnvelopedArgs).rootValue.execute(args) as never,
      subscribe: (args) => (args as EnvelopedArgs).rootValue.subscribe(args) as never,
      onNext: (ctx) => {
        // Throwing ends this operation (graphql-ws returns its stream), so nothing more is read for a socket going away.
        if (ctx.extra.socket.readyState !== ctx.extra.socket.OPEN) throw new Error('socket is closing');
      },
      onConnect: async (ctx) => {
        const authorization = ctx.connectionParams?.authorization;
        // graphql-ws keeps the whole `connection_init` payload for the socket's life (up to MAX_REQUEST_BYTES, from
        // anyone): only its authorization is ever read, so only that is kept.
        (ctx as { connectionParams?: Params }).connectionParams =
          authorization === undefined ? undefined : { authorization };
        const { viewer, token, rejected } = await authenticate(services, authorization);
        const { socket } = ctx.extra;
        // Closed while the token was looked up: its 'close' has been emitted, so a watch added now would stay (and
        // keep the session from expiring) for good.
        if (socket.readyState !== socket.OPEN) return false;
        contexts.set(socket, ctx);
        if (!rejected && !viewer) return true; // anonymous connections may run public operations
        if (!viewer || !token) {
          log.info({ requestId: requestIdOf(ctx), transport: 'ws' }, 'websocket refused: bad or expired token');
          return false; // closes the socket with 4403 Forbidden
        }
        // `on`, not `once`: ws emits 'close' once, and once's wrapper would cost every socket its heap.
        socket.on(
          'close',
          services.sessions.watch({ token }, () => forbidden(socket)),
        );
        return true;
      },
      onSubscribe: tracing
        ? async (ctx, id, payload) => {
            const admitted = await admit(ctx, id, payload);
            if (Array.isArray(admitted)) tracing.refused(payload.extensions, admitted);
            return admitted;
          }
        : admit,
    },
    wss,
    { sendTimeoutMs: config.websocket.sendTimeoutMs, log },
  );
  return {
    dispose: () => served.dispose(),
    /** Open sockets, and the live subscriptions on them (operations whose result is a stream), counted now. */
    stats() {
      let subscriptions = 0;
      for (const socket of wss.clients) {
        const ctx = contexts.get(socket);
        if (!ctx) continue;
        for (const operation of Object.values(ctx.subscriptions)) if (isAsyncIterable(operation)) subscriptions++;
      }
      return { sockets: wss.clients.size, subscriptions };
    },
  };
}
