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
 * The OpenTelemetry packages load in the background (app.ts starts them); an operation that arrives before they are
 * loaded waits for them.
 */
import type { Span, TracerProvider } from '@opentelemetry/api';
import type { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { publicCode } from '../errors.js';

/** The span attribute that lists the codes of an operation's errors. */
export const ERROR_CODES_ATTRIBUTE = 'graphql.error.codes';

type Result = { errors?: readonly GraphQLError[] };
type Hooks = Required<Pick<Plugin, 'onExecute' | 'onSubscribe'>>;

export function useTracing(provider: Promise<TracerProvider>): Plugin {
  const loaded = Promise.all([provider, import('@opentelemetry/api'), import('@envelop/opentelemetry')]).then(
    ([tracerProvider, api, { useOpenTelemetry, getCurrentOtelContext }]) =>
      withErrorCodes(
        useOpenTelemetry({ variables: false, result: false, resolvers: false }, tracerProvider) as unknown as Hooks,
        (contextValue) => api.trace.getSpan(getCurrentOtelContext(contextValue)),
        api.SpanStatusCode.ERROR,
      ),
  );
  let hooks: Hooks | undefined;
  loaded.then(
    (ready) => (hooks = ready),
    () => undefined,
  ); // a failure is app.ts' to log; operations wait on `loaded`
  return {
    onExecute: (payload) => (hooks ? hooks.onExecute(payload) : loaded.then((ready) => ready.onExecute(payload))),
    onSubscribe: (payload) => (hooks ? hooks.onSubscribe(payload) : loaded.then((ready) => ready.onSubscribe(payload))),
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
