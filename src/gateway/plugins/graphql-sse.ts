/**
 * graphql-sse's single-connection mode on /graphql: `PUT` reserves a stream (answered 201 with its token), `GET` with
 * `x-graphql-event-stream-token` (or `?token=`) opens it, `POST`s with the token run operations on it (202; results
 * and refusals arrive in the stream under the operation's id), `DELETE ?operationId=` stops one. Served by graphql-sse's
 * own handler; yoga keeps every other request, distinct-connections SSE included (the same protocol's other mode).
 *
 * Each operation runs through yoga's envelop like any other: authenticated by the `Authorization` of its own POST,
 * rate limited, masked, and its subscription ended with UNAUTHENTICATED when that token is revoked (revocation.ts).
 * The reserved stream itself outlives a revocation: its operations end (UNAUTHENTICATED, then `complete`), new ones
 * with the revoked token are refused in it, and graphql-sse's client (lazy, its default) closes the stream once its
 * last operation has ended.
 * A refusal is the operation's result in the stream, never a 4xx on its POST (graphql-sse's client would retry it).
 * A reservation is bounded: a user (or an address signed out) holds at most `perClient` reserved or open streams in
 * this process; past it, or with a token that is no session, the PUT is refused (429 BUSY, 401 UNAUTHENTICATED,
 * JSON); a reservation not opened within `connectMs` is dropped. Reservations live in the process that took
 * them: a deployment of several gateways routes a client's requests to one of them (sticky sessions).
 * A stop of the gateway ends its operations' subscriptions (shutdown.ts), and each open stream once the `complete` of
 * every operation graphql-sse took on it is sent.
 * A reservation runs at most `maxOperations` operations at once, as a WebSocket does (WS_MAX_SUBSCRIPTIONS): past it,
 * an operation's result is BUSY. One counts from its POST until it ends: answered, its subscription done or failed,
 * stopped by its DELETE, or its reservation released (its stream's end, which ends its subscriptions too).
 *
 * graphql-yoga's plugin for this (@graphql-yoga/plugin-graphql-sse) is not used: it takes every request of its path
 * (here yoga's own POST and GET), lets a failing context (a Redis error resolving the token) reject graphql-sse's
 * handler, and hands the handler a refused subscription's result without `data`, which graphql-sse then reads as
 * operation arguments (400 "Unable to detect operation AST").
 */
import { randomUUID } from 'node:crypto';
import {
  getOperationAST,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLError,
  type GraphQLSchema,
} from 'graphql';
import { TOKEN_HEADER_KEY, TOKEN_QUERY_KEY, type Response as HandlerResponse } from 'graphql-sse';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { authenticate } from '../../context.js';
import { AppError, type ErrorCode } from '../../errors.js';
import type { Services } from '../../services/index.js';
import { graphQLError, httpStatusOf, maskError } from '../errors.js';
import { boundedRequest } from './body-limit.js';
import type { RateLimitedContext } from './limits.js';
import { persistedDocument } from './persisted-queries.js';
import { onAbort } from './shutdown.js';

const refusal = (code: ErrorCode, message: string): HandlerResponse => [
  JSON.stringify({ errors: [{ message, extensions: { code } }] }),
  {
    status: httpStatusOf(code) ?? 500,
    statusText: code,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  },
];

/**
 * The results a reservation's stream holds in memory unsent at most (about: graphql-sse queues each result it takes
 * from an operation, and its stream sends them as its socket drains). Past it, the reservation's operations take no
 * more results until it sends some: a client that stops reading its stream holds up its own subscriptions (their
 * feeds keep what they missed in Redis), not the gateway's memory.
 */
const UNSENT_MAX = 100;

/** Each message of graphql-sse's stream is one chunk: an operation's end starts with this. */
const COMPLETE = new TextEncoder().encode('event: complete');
const isComplete = (chunk: Uint8Array) => COMPLETE.every((byte, i) => chunk[i] === byte);

/** A reservation: who holds it, the timer that drops it unless its stream opens, its operations, what is unsent. */
class Reservation {
  readonly running = new Set<Operation>();
  /** Results taken from its operations and not yet sent on its stream. */
  private unsent = 0;
  private readonly waiting = new Set<() => void>();
  /** Operations graphql-sse took and has not completed yet (it queues a `complete` for each as it ends). */
  private completing = 0;
  /** `complete` events queued on the stream and not yet sent. */
  private completesUnsent = 0;

  constructor(
    readonly who: string,
    public expiry: NodeJS.Timeout | undefined,
  ) {}

  /** Resolves once the stream has room for one more result, or at once when it has. */
  room(): Promise<void> | undefined {
    if (this.unsent < UNSENT_MAX) return undefined;
    return new Promise((resolve) => this.waiting.add(resolve));
  }

  /** An operation's result taken for the stream. */
  taken(): void {
    this.unsent++;
  }

  /** A message of the stream sent (a result, or a ping or a completion: the count never goes below 0). */
  sent(): void {
    if (this.unsent > 0) this.unsent--;
    if (this.unsent < UNSENT_MAX) this.wake();
  }

  /** An operation taken by graphql-sse, which ends it with a `complete` on the stream. */
  began(): void {
    this.completing++;
  }

  /** graphql-sse queued an operation's `complete`. */
  completed(): void {
    this.completing--;
    this.completesUnsent++;
  }

  /** A `complete` sent on the stream. */
  completeSent(): void {
    this.completesUnsent--;
  }

  /** Every operation taken has ended and its `complete` is sent: a stop may end the stream. */
  get settled(): boolean {
    return this.completing === 0 && this.completesUnsent === 0;
  }

  /** Wakes the operations waiting for room (when it is made, or when they end). */
  wake(): void {
    for (const resolve of this.waiting) resolve();
    this.waiting.clear();
  }
}

/**
 * One operation on a reservation, in its `running` set from its POST until it ends. A subscription's results pass
 * through it (graphql-sse takes it for an async generator: its DELETE and its stream's end return it), so that
 * they leave the set when they are done, fail or are returned, and wait while the stream has no room.
 */
class Operation implements AsyncIterableIterator<ExecutionResult> {
  private results: AsyncIterator<ExecutionResult> | undefined;
  private readonly running: Set<Operation>;

  constructor(private readonly reservation: Reservation) {
    this.running = reservation.running;
    this.running.add(this);
  }

  /** Follows a subscription's results; one that has ended meanwhile (its stream's end) stops them instead. */
  follow(results: AsyncIterable<ExecutionResult>): this | undefined {
    const iterator = results[Symbol.asyncIterator]();
    if (!this.running.has(this)) {
      void iterator.return?.();
      return undefined;
    }
    this.results = iterator;
    return this;
  }

  /** Ends it unless it follows a subscription's results (which end it when they end). */
  settle(): void {
    if (!this.results) this.running.delete(this);
  }

  async next(): Promise<IteratorResult<ExecutionResult>> {
    try {
      for (let room = this.reservation.room(); room; room = this.reservation.room()) {
        await room;
        if (!this.running.has(this)) return { done: true, value: undefined }; // returned while it waited
      }
      const step = await this.results!.next();
      if (step.done) this.running.delete(this);
      else this.reservation.taken();
      return step;
    } catch (error) {
      this.running.delete(this);
      throw error;
    }
  }

  async return(value?: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.end();
    return (await this.results?.return?.(value)) ?? { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.end();
    if (this.results?.throw) return this.results.throw(error);
    throw error;
  }

  /** Leaves the running set, and wakes a wait for room so that it sees it ended. */
  private end(): void {
    this.running.delete(this);
    this.reservation.wake();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

const TOKEN_PARAMETER = `${TOKEN_QUERY_KEY}=`;

/** Requests of the single-connection mode: a reservation, or any request naming one (cheap checks first). */
const isSingleConnection = (request: Request, url: URL) =>
  request.method === 'PUT' ||
  request.headers.has(TOKEN_HEADER_KEY) ||
  (request.url.includes(TOKEN_PARAMETER) && url.searchParams.has(TOKEN_QUERY_KEY));

export function useGraphQLSseSingleConnection({
  path,
  services,
  perClient,
  connectMs,
  maxOperations,
  maxBodyBytes,
  stopping,
}: {
  path: string;
  services: Services;
  perClient: number;
  connectMs: number;
  /** Operations one reservation runs at once. */
  maxOperations: number;
  /** The largest body of a request (MAX_REQUEST_BYTES): this mode reads its POSTs before yoga's own limit would. */
  maxBodyBytes: number;
  /** Aborted when the gateway stops: each open stream ends once its operations have (shutdown.ts ends them). */
  stopping: AbortSignal;
}): Plugin {
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
  const reservations = new Map<string, Reservation>();
  const held = new Map<string, number>();
  let handle: (request: Request) => Promise<Response>;

  const release = (token: string) => {
    const reservation = reservations.get(token);
    if (!reservation) return;
    reservations.delete(token);
    clearTimeout(reservation.expiry);
    for (const operation of reservation.running) void operation.return();
    const left = held.get(reservation.who)! - 1;
    if (left) held.set(reservation.who, left);
    else held.delete(reservation.who);
  };

  /** graphql-sse keeps a reservation until its stream ends: opened and ended here, it is gone. */
  const drop = async (token: string) => {
    release(token);
    const stream = await handle(
      new Request(`http://localhost${path}`, { headers: { accept: 'text/event-stream', [TOKEN_HEADER_KEY]: token } }),
    );
    await stream.body?.cancel();
  };

  const reserve = async (request: Request): Promise<string | HandlerResponse> => {
    const { viewer, rejected } = await authenticate(services, request.headers.get('authorization'));
    if (rejected) return refusal('UNAUTHENTICATED', rejected);
    const who = viewer ? `user:${viewer.username}` : `addr:${String(serverContexts.get(request)?.address)}`;
    const holding = held.get(who) ?? 0;
    if (holding >= perClient)
      return refusal('BUSY', `at most ${perClient} graphql-sse reservations at once: close a stream first`);
    const token = randomUUID();
    held.set(who, holding + 1);
    const expiry = setTimeout(() => void drop(token), connectMs).unref();
    reservations.set(token, new Reservation(who, expiry));
    return token;
  };

  return {
    onYogaInit({ yoga }) {
      const tokenOf = (req: { url: string; headers: { get(key: string): string | null | undefined } }) =>
        req.headers.get(TOKEN_HEADER_KEY) ?? new URL(req.url).searchParams.get(TOKEN_QUERY_KEY) ?? '';
      const streamEnded = { data: null, errors: [graphQLError('NOT_FOUND', 'graphql-sse stream not found')] };
      handle = createHandler<Record<string, unknown>>(
        {
          authenticate: (req) => (req.method === 'PUT' ? reserve(req.raw) : tokenOf(req)),
          async onSubscribe(req, params) {
            // graphql-sse calls this only for a token it knows, which it may still know while its stream is ending.
            const reservation = reservations.get(tokenOf(req));
            if (!reservation) return streamEnded;
            reservation.began();
            if (reservation.running.size >= maxOperations)
              return {
                data: null,
                errors: [graphQLError('BUSY', `at most ${maxOperations} operations per connection`)],
              };
            const counted = new Operation(reservation);
            const server = (serverContexts.get(req.raw) ?? {}) as RateLimitedContext & Record<string, unknown>;
            try {
              // As over HTTP and WebSocket (yoga's parameters phase does not run here): a hash sent with a query must
              // be its hash (or the query would be stored under another's), a hash alone names a persisted document,
              // and PERSISTED_ONLY=on runs a whole document for an admin only.
              const viewer = async () =>
                (await (server.authentication ??= authenticate(services, req.raw.headers.get('authorization')))).viewer;
              const query = (await persistedDocument(services, params, viewer)) ?? '';
              const enveloped = yoga.getEnveloped({ ...server, request: req.raw, params: { ...params, query } });
              const schema = enveloped.schema as GraphQLSchema;
              const document = enveloped.parse(query) as DocumentNode;
              const errors = enveloped.validate(schema, document) as readonly GraphQLError[];
              if (errors.length) return { data: null, errors };
              const operation = getOperationAST(document, params.operationName)?.operation;
              const run = operation === OperationTypeNode.SUBSCRIPTION ? enveloped.subscribe : enveloped.execute;
              const result = (await run({
                schema,
                document,
                contextValue: await enveloped.contextFactory(),
                variableValues: params.variables,
                operationName: params.operationName,
              })) as ExecutionResult | AsyncIterable<ExecutionResult>;
              if (isAsyncIterable(result)) return counted.follow(result) ?? streamEnded;
              // graphql-sse takes a result only with `data`: a refused subscription has none.
              return 'data' in result ? result : { data: null, ...result };
            } catch (error) {
              const masked = maskError(error, 'Unexpected error.');
              if (!AppError.is(error) && masked !== error) yoga.logger.error(error);
              return { data: null, errors: [masked as GraphQLError] };
            } finally {
              counted.settle();
            }
          },
          onComplete: (_ctx, req) => reservations.get(tokenOf(req))?.completed(),
        },
        yoga.fetchAPI,
      );
    },
    onRequest(payload) {
      const { url, serverContext, fetchAPI } = payload;
      let { request } = payload;
      if (!perClient || !isSingleConnection(request, url) || url.pathname !== path) return;
      try {
        request = boundedRequest(request, maxBodyBytes, fetchAPI);
      } catch (err) {
        const { message, extensions } = err as GraphQLError;
        return payload.endResponse(
          new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: extensions.code } }] }), {
            status: 413,
            headers: { 'content-type': 'application/json; charset=utf-8' },
          }),
        );
      }
      serverContexts.set(request, serverContext);
      const token = request.headers.get(TOKEN_HEADER_KEY) ?? url.searchParams.get(TOKEN_QUERY_KEY);
      return handle(request).then((response) => {
        const reservation = token && reservations.get(token);
        if (request.method !== 'GET' || response.status !== 200 || !reservation || !response.body)
          return payload.endResponse(response);
        // Its stream is open: the reservation stays held until the stream ends.
        clearTimeout(reservation.expiry);
        let stream: TransformStreamDefaultController<Uint8Array> | undefined;
        /** Once the gateway stops and every operation's `complete` is sent, the stream ends as a response does. */
        const endIfStopped = () => {
          if (!stopping.aborted || !reservation.settled || !stream) return;
          stream.terminate();
          end();
        };
        const end = () => {
          stream = undefined;
          unwatch();
          release(token);
        };
        // Each chunk is one message of graphql-sse's queue, pulled as the socket drains: one sent.
        const sent = new TransformStream<Uint8Array, Uint8Array>({
          start(controller) {
            stream = controller;
          },
          transform(chunk, controller) {
            controller.enqueue(chunk);
            reservation.sent();
            if (isComplete(chunk)) reservation.completeSent();
            endIfStopped();
          },
          flush: end,
        });
        request.signal.addEventListener('abort', end, { once: true });
        const unwatch = onAbort(stopping, endIfStopped);
        payload.endResponse(
          new Response(response.body.pipeThrough(sent), {
            status: response.status,
            headers: response.headers,
          }),
        );
      });
    },
  };
}
