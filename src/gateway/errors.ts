/**
 * How errors leave the gateway. Expected failures (AppError) become GraphQL errors with their public code;
 * errors GraphQL itself raises about the request (syntax, validation, variable coercion, limits) get
 * BAD_USER_INPUT; anything else is masked as INTERNAL_SERVER_ERROR, its details kept for the logs only.
 *
 * Errors are made with yoga's createGraphQLError, never `new GraphQLError` from our own import: graphql-ws and
 * yoga check `instanceof GraphQLError` against the graphql they load, and a test runner may load a second copy.
 */
import type { GraphQLError } from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../errors.js';

export function graphQLError(code: ErrorCode, message: string): GraphQLError {
  return createGraphQLError(message, { extensions: { code } });
}

/** An expected failure as a GraphQL error, with its code and details (`retryAfter`, `argument`). */
export function fromAppError(error: AppError): GraphQLError {
  return createGraphQLError(error.message, { extensions: error.extensions });
}

/**
 * Runs `make` capturing no stack for the errors it creates: for refusals that are expected, answered often and never
 * logged (a rate limit's BUSY), where capturing two stacks was a quarter of the gateway's CPU per refusal.
 */
export function withoutStacks<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The codes of docs/api.md, and Apollo's PERSISTED_QUERY_NOT_FOUND (which APQ clients look for). An error GraphQL
 * itself raises with any other code is about the request: BAD_USER_INPUT.
 */
const PUBLIC_CODES = new Set<string>([
  ...ERROR_CODES,
  'INTERNAL_SERVER_ERROR',
  'PERSISTED_QUERY_NOT_FOUND',
  // PERSISTED_ONLY=on (plugins/persisted-queries.ts)
  'PERSISTED_QUERY_NOT_IN_LIST',
  'PERSISTED_QUERY_ONLY',
]);

/**
 * The HTTP status of an answer that a public code refuses, where the status is the refusal's to give (a refused
 * operation over SSE or as application/graphql-response+json: plugins/refusals.ts; persisted queries' refusals:
 * plugins/persisted-queries.ts). Codes not listed keep yoga's status.
 */
const HTTP_STATUS: Readonly<Record<string, number>> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PERSISTED_QUERY_NOT_FOUND: 404,
  PERSISTED_QUERY_NOT_IN_LIST: 404,
  PERSISTED_QUERY_ONLY: 400,
  CONFLICT: 409,
  BUSY: 429,
  MAINTENANCE: 503,
} satisfies Record<ErrorCode | `PERSISTED_QUERY_${'NOT_FOUND' | 'NOT_IN_LIST' | 'ONLY'}`, number>;

/** The status of an answer refused with `code` (one of HTTP_STATUS's), or undefined. */
export function httpStatusOf(code: unknown): number | undefined {
  return typeof code === 'string' ? HTTP_STATUS[code] : undefined;
}

/** Relabels, in place, an error about the request itself, so yoga keeps its HTTP status and does not log it. */
function markBadUserInput(error: GraphQLError): void {
  (error.extensions as Record<string, unknown>).code = 'BAD_USER_INPUT';
}

/** By name, as yoga does: `instanceof` fails when graphql is loaded twice (its ESM and CJS builds). */
function isGraphQLError(value: unknown): value is GraphQLError {
  return value instanceof Error && value.name === 'GraphQLError';
}

/** yoga's error masking. Returning the same error means "expected"; yoga logs every error it gets back changed. */
export function maskError(error: unknown, message: string): Error {
  if (AppError.is(error)) return fromAppError(error);
  if (!isGraphQLError(error)) return createGraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  const original = error.originalError;
  if (AppError.is(original)) return error; // already carries the AppError's extensions
  if (isGraphQLError(original)) {
    const masked = maskError(original, message);
    if (masked !== original) return masked;
    // Expected inside (a variable's value a scalar refused): the outer error, which names the variable, keeps its code.
    (error.extensions as Record<string, unknown>).code = original.extensions.code;
    return error;
  }
  if (original) {
    return createGraphQLError(message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
  }
  // Raised by graphql-js or yoga about the request itself (syntax, variables, operation name, body size).
  if (!PUBLIC_CODES.has(String(error.extensions?.code))) markBadUserInput(error);
  return error;
}

/** The public code an error leaves the gateway with (what maskError gives it), for GET /metrics. */
export function publicCode(error: unknown): string {
  if (AppError.is(error)) return error.code;
  if (isGraphQLError(error) && AppError.is(error.originalError)) return error.originalError.code;
  const code = (maskError(error, '') as GraphQLError).extensions?.code;
  return typeof code === 'string' && PUBLIC_CODES.has(code) ? code : 'INTERNAL_SERVER_ERROR';
}

/**
 * Gives every validation failure (unknown fields, wrong argument types, graphql-armor's limits) the public
 * code BAD_USER_INPUT, on HTTP and WebSocket alike. It runs before yoga's own hook, which only sets a code
 * where none is set. A document nested so deeply that the parser runs out of stack is BAD_USER_INPUT too, and so are
 * `variables` or `extensions` that are not JSON in a GET's query string or a form body (yoga's parser lets
 * JSON.parse's error through, which would be masked as unexpected).
 */
export function useBadRequestCode(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      // Only these two parse variables and extensions from a query string (a JSON body is parsed with a guard).
      const queryString =
        request.method === 'GET' ||
        request.headers.get('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded');
      if (!requestParser || !queryString) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
          throw createGraphQLError(`variables or extensions: not JSON (${err.message})`, {
            extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
          });
        }
      });
    },
    onParse() {
      return ({ result, replaceParseResult }) => {
        if (result instanceof RangeError)
          replaceParseResult(
            createGraphQLError('the document nests too deeply', { extensions: { code: 'BAD_USER_INPUT' } }),
          );
      };
    },
    onValidate() {
      return ({ valid, result }) => {
        if (valid) return;
        for (const error of result as readonly GraphQLError[]) markBadUserInput(error);
      };
    },
  };
}

/** The request each error was raised in, for yoga's log line about the errors it masks (it logs the error alone). */
const requestIds = new WeakMap<object, string>();

export function tagRequestId(error: unknown, requestId: string): void {
  if (typeof error === 'object' && error !== null) requestIds.set(error, requestId);
}

export function requestIdOf(error: object): string | undefined {
  return requestIds.get(error);
}

/** Tags the errors of every query and mutation result with the operation's request id, before yoga masks them. */
export function useErrorRequestIds(): Plugin<Context> {
  return {
    onExecute({ args }) {
      const { requestId } = args.contextValue as Context;
      return {
        onExecuteDone({ result }) {
          if (isAsyncIterable(result)) return;
          for (const error of result.errors ?? []) tagRequestId(error, requestId);
        },
      };
    },
  };
}
