/**
 * A span per operation, HTTP and WebSocket alike (OpenTelemetry; on when OTEL_EXPORTER_OTLP_ENDPOINT is set, see
 * src/tracing.ts): `@envelop/opentelemetry`'s plugin, named `<type>.<operation name>` (`query.Me`), with the operation's
 * name and type, and its document when that holds no inline argument; never the variables, nor the result. The Redis
 * commands an operation sends are its child spans (redis/clients.ts traceRedisCommands).
 *
 * Around the envelop plugin, this adds the errors' codes: a result with errors sets the span's status to ERROR and
 * `graphql.error.codes` to their public codes (distinct, in order: what a client gets as `extensions.code`, the
 * codes GET /metrics counts); the plugin's own exception event gets only the
 * codes and paths, not the messages (graphql-js quotes a bad variable's value in its message). A subscription refused
 * at its start (no stream) ends its span here, which the plugin leaves open.
 *
 * An operation refused before it ran (syntax, validation and graphql-armor's limits, the rate limit's BUSY before
 * parsing, an unknown persisted query, a request too large; over WebSocket what ws.ts refuses) gets a span named
 * `graphql.refused` with the codes, status ERROR, and no operation name: none is counted for it on GET /metrics
 * either, and the name a client sends is unbounded. Maintenance and a rate limit at execution refuse an operation
 * that has its own span.
 *
 * An incoming W3C trace context is continued (the propagator src/tracing.ts registers): over HTTP the request's
 * `traceparent` and `tracestate` headers, over WebSocket the same keys in the subscribe message's `extensions`
 * (per operation: a socket lives far longer than a trace). A malformed one starts a new trace.
 *
 * The OpenTelemetry packages load in the background (app.ts starts them); an operation that arrives before they are
 * loaded waits for them.
 */
import type { Context, Span, TextMapGetter, TracerProvider } from '@opentelemetry/api';
import type { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { publicCode } from '../errors.js';
import type { RateLimitedContext } from './limits.js';

/** The span attribute that lists the codes of an operation's errors. */
export const ERROR_CODES_ATTRIBUTE = 'graphql.error.codes';
/** The name of the span of an operation refused before it ran. */
export const REFUSED_SPAN = 'graphql.refused';

/** Where a WebSocket operation's context (ws.ts) carries its caller's trace: the subscribe message's extensions. */
export interface TracedContext {
  traceCarrier?: unknown;
}

export interface OperationTracing {
  /** yoga's plugin: the operations' spans, and HTTP's refusals before execution. */
  plugin: Plugin;
  /** A WebSocket operation refused before it ran: its span, under the trace its `carrier` (extensions) continues. */
  refused(carrier: unknown, errors: readonly unknown[]): void;
}

type Result = { errors?: readonly GraphQLError[] };
type Hooks = Required<Pick<Plugin, 'onExecute' | 'onSubscribe'>>;
interface Loaded extends Hooks {
  onResultProcess: NonNullable<Plugin['onResultProcess']>;
  refused: OperationTracing['refused'];
}

const isHeaders = (carrier: object): carrier is Headers => typeof (carrier as { get?: unknown }).get === 'function';

/** Reads a propagator's keys (W3C's `traceparent`, `tracestate`) from HTTP headers or a subscribe message's extensions. */
const getter: TextMapGetter<unknown> = {
  keys: (carrier) =>
    typeof carrier !== 'object' || carrier === null
      ? []
      : isHeaders(carrier)
        ? [...carrier.keys()]
        : Object.keys(carrier),
  get(carrier, key) {
    if (typeof carrier !== 'object' || carrier === null) return undefined;
    const value = isHeaders(carrier) ? carrier.get(key) : (carrier as Record<string, unknown>)[key];
    return typeof value === 'string' ? value : undefined;
  },
};

export function operationTracing(provider: Promise<TracerProvider>): OperationTracing {
  const loaded = Promise.all([provider, import('@opentelemetry/api'), import('@envelop/opentelemetry')]).then(
    ([tracerProvider, api, envelop]): Loaded => {
      const { ERROR: error } = api.SpanStatusCode;
      const tracer = tracerProvider.getTracer('graphql');
      /** The context an operation's span starts in: the caller's trace when `carrier` holds a valid one. */
      const parentOf = (carrier: unknown): Context =>
        api.propagation.extract(api.context.active(), carrier ?? {}, getter);
      /** The operations that reached execution (their envelop span), by context: HTTP's result leaves them be. */
      const executed = new WeakSet<object>();
      const otel = envelop.useOpenTelemetry({ variables: false, result: false, resolvers: false }, tracerProvider);
      const traced = withErrorCodes(
        otel as unknown as Hooks,
        (contextValue) => api.trace.getSpan(envelop.getCurrentOtelContext(contextValue)),
        error,
      );
      const starting = (contextValue: object) => {
        executed.add(contextValue);
        const carrier =
          (contextValue as { request?: Request }).request?.headers ?? (contextValue as TracedContext).traceCarrier;
        envelop.setCurrentOtelContext(contextValue, parentOf(carrier));
      };
      const refused = (carrier: unknown, errors: readonly unknown[]) => {
        const codes = [...new Set(errors.map(publicCode))];
        tracer
          .startSpan(
            REFUSED_SPAN,
            { kind: api.SpanKind.SERVER, attributes: { [ERROR_CODES_ATTRIBUTE]: codes } },
            parentOf(carrier),
          )
          .setStatus({ code: error, message: codes.join(', ') })
          .end();
      };
      return {
        onExecute(payload) {
          starting(payload.args.contextValue);
          return traced.onExecute(payload);
        },
        onSubscribe(payload) {
          starting(payload.args.contextValue);
          return traced.onSubscribe(payload);
        },
        onResultProcess({ serverContext, request, result }) {
          // Over HTTP only (WebSocket operations have no result processing): a request that executed nothing.
          if (executed.has(serverContext) || Array.isArray(result) || isAsyncIterable(result)) return;
          const { earlyRefusal } = serverContext as Partial<RateLimitedContext>;
          const errors = earlyRefusal ? [earlyRefusal] : (result as Result).errors;
          if (errors?.length) refused(request.headers, errors);
        },
        refused,
      };
    },
  );
  let ready: Loaded | undefined;
  loaded.then(
    (hooks) => (ready = hooks),
    () => undefined,
  ); // a failure is app.ts' to log; operations wait on `loaded`
  return {
    plugin: {
      onExecute: (payload) => (ready ? ready.onExecute(payload) : loaded.then((hooks) => hooks.onExecute(payload))),
      onSubscribe: (payload) =>
        ready ? ready.onSubscribe(payload) : loaded.then((hooks) => hooks.onSubscribe(payload)),
      onResultProcess: (payload) =>
        ready ? ready.onResultProcess(payload) : loaded.then((hooks) => hooks.onResultProcess(payload)),
    },
    refused: (carrier, errors) =>
      ready ? ready.refused(carrier, errors) : void loaded.then((hooks) => hooks.refused(carrier, errors)),
  };
}

function withErrorCodes(otel: Hooks, spanOf: (contextValue: unknown) => Span | undefined, error: number): Hooks {
  /** Marks the span, and answers the result the plugin may see: the errors' codes and paths, not their messages. */
  const mark = (contextValue: unknown, result: Result): Result => {
    if (!result.errors?.length) return result;
    const span = spanOf(contextValue);
    const codes = [...new Set(result.errors.map(publicCode))];
    span?.setAttribute(ERROR_CODES_ATTRIBUTE, codes);
    span?.setStatus({ code: error, message: codes.join(', ') });
    const errors = result.errors.map((e) => ({ path: e.path, extensions: { code: publicCode(e) } }));
    return { ...result, errors: errors as unknown as GraphQLError[] };
  };
  type Streamed = { onNext?: (p: { result: Result }) => void; onEnd?: () => void };
  const marking = (contextValue: unknown, streamed: Streamed | void): Streamed => ({
    onNext: (payload) => streamed?.onNext?.({ ...payload, result: mark(contextValue, payload.result) }),
    onEnd: () => streamed?.onEnd?.(),
  });
  return {
    async onExecute(payload) {
      const after = await otel.onExecute(payload);
      const done = after?.onExecuteDone;
      if (!done) return after;
      const { contextValue } = payload.args;
      return {
        onExecuteDone(payload) {
          const result = payload.result as Result | AsyncIterable<Result>;
          const seen = isAsyncIterable(result) ? result : mark(contextValue, result);
          return marking(contextValue, done({ ...payload, result: seen as never }) as Streamed | void);
        },
      };
    },
    async onSubscribe(payload) {
      const after = await otel.onSubscribe(payload);
      const started = after?.onSubscribeResult;
      if (!after || !started) return after;
      const { contextValue } = payload.args;
      return {
        ...after,
        onSubscribeResult(payload) {
          const result = payload.result as Result | AsyncIterable<Result>;
          if (isAsyncIterable(result)) return marking(contextValue, started(payload) as Streamed | void);
          mark(contextValue, result);
          spanOf(contextValue)?.end();
          return undefined;
        },
      };
    },
  };
}
