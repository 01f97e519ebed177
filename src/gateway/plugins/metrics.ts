/**
 * Counts and times every operation the gateway serves, over HTTP and WebSocket alike, under its operation name
 * (`anonymous` without one): queries and mutations from the start of execution to its result, subscriptions
 * until their stream is set up. Recording is in memory: the telemetry (src/services/telemetry/metrics.ts) bounds the
 * name and writes it to Redis later; `GET /metrics` (gateway/prometheus.ts) labels it with that same bounded name
 * and counts the result's errors by code. HTTP requests refused before any operation ran (syntax, validation and
 * document limits, an unknown persisted query) are counted by code, and subscriptions over HTTP (SSE, multipart)
 * while live.
 */
import { getOperationAST, type DocumentNode, type GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../../context.js';
import type { OperationTiming } from '../../services/telemetry/metrics.js';
import type { GatewayMetrics } from '../prometheus.js';
import { httpSubscriptionTransport } from './http-media-types.js';
import { wasRefusedEarly } from './limits.js';

function operationName(document: unknown, name: unknown): string | undefined {
  return getOperationAST(document as DocumentNode, typeof name === 'string' ? name : undefined)?.name?.value;
}

type Result = { errors?: readonly GraphQLError[] } | AsyncIterable<unknown>;
type Finish = (args: TimedArgs, started: number, result: Result) => void;
interface TimedArgs {
  document: unknown;
  operationName?: unknown;
}

/**
 * The hooks of one execution, as an instance rather than closures: a request's hooks cost no function objects, and
 * envelop calls them as methods.
 */
class ExecutionTiming {
  constructor(
    private readonly finish: Finish,
    private readonly args: TimedArgs,
    private readonly started: number,
  ) {}

  onExecuteDone({ result }: { result: unknown }): void {
    this.finish(this.args, this.started, result as Result);
  }
}

/**
 * `record` gets the operation's name as the client sent it (undefined without one), bounds it itself and returns the
 * name it counted under (undefined when it counts nothing).
 */
export function useOperationMetrics(
  record: (timing: OperationTiming) => string | undefined,
  prometheus: GatewayMetrics,
): Plugin<Context & { request?: Request }> {
  const finish: Finish = (args, started, result) => {
    const seconds = (performance.now() - started) / 1000;
    const name = record({ operation: operationName(args.document, args.operationName), seconds });
    prometheus.operation(name, seconds, isAsyncIterable(result) ? undefined : result.errors);
  };
  return {
    onExecute({ args }) {
      return new ExecutionTiming(finish, args, performance.now());
    },
    onSubscribe({ args }) {
      const started = performance.now();
      const { request } = args.contextValue as { request?: Request };
      return {
        onSubscribeResult({ result }) {
          finish(args, started, result as Result);
          if (!request || !isAsyncIterable(result)) return;
          // Over WebSocket, ws.ts counts the live subscriptions at the scrape: no hook for each of them.
          const end = prometheus.httpSubscription(httpSubscriptionTransport(request.headers.get('accept')) ?? 'sse');
          // A client gone before the stream started leaves it unread, never ended: its request's abort ends it (once).
          if (request.signal.aborted) end();
          else request.signal.addEventListener('abort', end, { once: true });
          return { onEnd: end };
        },
      };
    },
    onResultProcess({ serverContext, result }) {
      // An HTTP request's context is its server context, extended: the services are there once yoga built the
      // operation's context, after parsing and validation, so a result without them was refused before (but for an
      // operation over its rate limit, refused before parsing and counted as an operation by plugins/limits.ts).
      if ((serverContext as Partial<Context>).services || Array.isArray(result) || isAsyncIterable(result)) return;
      if (wasRefusedEarly(serverContext)) return;
      const { errors } = result as { errors?: readonly GraphQLError[] };
      if (errors?.length) prometheus.refusedRequest(errors);
    },
  };
}
