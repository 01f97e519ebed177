/**
 * How errors leave the gateway. Expected failures (AppError) become GraphQL errors with their public code;
 * errors GraphQL itself raises about the request (syntax, validation, variable coercion, limits) get
 * BAD_USER_INPUT; anything else is masked as INTERNAL_SERVER_ERROR, its details kept for the logs only.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError, type ErrorCode } from './errors.js';

export function graphQLError(code: ErrorCode, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** Codes that graphql-js, yoga and graphql-armor give to problems with the request itself. */
const REQUEST_PROBLEMS = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'REQUEST_ENTITY_TOO_LARGE',
]);

/** By name, as yoga does: `instanceof` fails when graphql is loaded twice (its ESM and CJS builds). */
function isGraphQLError(value: unknown): value is GraphQLError {
  return value instanceof Error && value.name === 'GraphQLError';
}

/** yoga's error masking. Returning the same error means "expected"; yoga logs every error it gets back changed. */
export function maskError(error: unknown, message: string): Error {
  if (AppError.is(error)) return new GraphQLError(error.message, { extensions: error.extensions });
  if (!isGraphQLError(error)) return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  const original = error.originalError;
  if (AppError.is(original)) return error; // already carries the AppError's extensions
  if (isGraphQLError(original)) return maskError(original, message);
  if (original) {
    return new GraphQLError(message, { nodes: error.nodes, path: error.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
  const code = error.extensions?.code;
  if (typeof code === 'string' && !REQUEST_PROBLEMS.has(code)) return error; // already one of ours
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
  });
}

/**
 * Gives every validation failure (unknown fields, wrong argument types, graphql-armor's limits) the public
 * code BAD_USER_INPUT, on HTTP and WebSocket alike. It runs before yoga's own hook, which only sets a code
 * where none is set.
 */
export function useBadRequestCode(): Plugin {
  return {
    onValidate() {
      return ({ valid, result }) => {
        if (valid) return;
        for (const error of result as readonly GraphQLError[]) (error.extensions as Record<string, unknown>).code = 'BAD_USER_INPUT';
      };
    },
  };
}
