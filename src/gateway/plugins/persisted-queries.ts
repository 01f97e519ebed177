/**
 * Apollo's automatic persisted queries (APQ) over HTTP, POST and GET, with `@graphql-yoga/plugin-apq` and the store
 * in Redis (src/services/persisted-queries/): a request with `extensions.persistedQuery.sha256Hash` and no query
 * runs the document registered under the hash (`PersistedQueryNotFound` when none is, and the client sends it
 * again with the query); one with both registers the query, once its hash is checked.
 *
 * A document is registered only once its operation is admitted: it parsed and passed validation and every document
 * limit (MAX_QUERY_TOKENS, depth, cost, aliases), maintenance and the rate limit (this plugin's execute hook comes
 * after theirs), so a registration costs an operation of the client's quota and a refused document is never stored.
 * A persisted document goes through the same parse, validation and limits as one sent whole.
 *
 * graphql-ws does not pass through yoga's request pipeline, so the plugin's hook does not run there: ws.ts resolves
 * a hash-only subscribe message with `persistedDocument` below, the same rules.
 */
import { createHash } from 'node:crypto';
import { useAPQ } from '@graphql-yoga/plugin-apq';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';
import type { Context } from '../../context.js';
import type { PersistedQueryStore } from '../../services/persisted-queries/store.js';

/** What clients (Apollo's PersistedQueryLink, urql's persistedExchange) look for, by message or by code. */
export const PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND';

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** The hash of APQ's extension (`{ persistedQuery: { version: 1, sha256Hash } }`), when a request carries one. */
export function persistedHash(extensions: unknown): string | undefined {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)
    ?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : undefined;
}

function notFound(): GraphQLError {
  return createGraphQLError('PersistedQueryNotFound', {
    extensions: { code: PERSISTED_QUERY_NOT_FOUND, http: { status: 404 } },
  });
}

function mismatch(): GraphQLError {
  return createGraphQLError(
    'PersistedQueryMismatch: extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it ' +
      '(64 lowercase hex digits of the hash of its UTF-8, as sent); the query was neither run nor stored',
    { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } },
  );
}

/**
 * The document a request names: its `query` when it sends one (with a hash, the hash must be the query's), else the
 * document registered under its hash. Throws PersistedQueryNotFound or the mismatch. For graphql-ws (ws.ts).
 */
export async function persistedDocument(
  store: PersistedQueryStore,
  { query, extensions }: { query: string | undefined; extensions?: unknown },
): Promise<string | undefined> {
  const sha256 = persistedHash(extensions);
  if (sha256 === undefined) return query;
  if (query) {
    if (sha256Hex(query) !== sha256) throw mismatch();
    return query;
  }
  const document = await store.get({ sha256 });
  if (document === undefined) throw notFound();
  return document;
}

/** The query and extensions of an operation: yoga's `params` over HTTP; ws.ts sets them for an APQ operation. */
export interface WithParams {
  params?: { query?: string | null; extensions?: Record<string, unknown> | null };
}

export function usePersistedQueries(store: PersistedQueryStore): Plugin<Context & WithParams> {
  const apq = useAPQ({
    store: {
      get: (sha256) => store.get({ sha256 }),
      // Registration waits for the operation to be admitted (register below), so it is no part of parsing params.
      set: () => undefined,
    },
    hash: sha256Hex,
  });
  const onParams = apq.onParams!;

  /** Registers the operation's document under its hash (checked by then); a failure leaves it unregistered. */
  const register = ({ contextValue }: { contextValue: unknown }) => {
    const context = contextValue as Context & WithParams; // its `log` is made on first use: only on a failure
    const { params } = context;
    const sha256 = persistedHash(params?.extensions);
    if (sha256 === undefined || !params?.query) return;
    const registered = store.register({ sha256, document: params.query });
    if (typeof registered === 'string') return;
    // The operation runs either way: it came with its document.
    return registered.then(
      () => undefined,
      (err: unknown) => context.log.warn({ err }, 'registering a persisted query failed'),
    );
  };

  return {
    onParams(payload) {
      if (persistedHash(payload.params.extensions) === undefined) return;
      return (async () => {
        try {
          await onParams(payload);
        } catch (err) {
          // The plugin's mismatch error says only "PersistedQueryMismatch".
          throw (err as GraphQLError).extensions?.code === 'PERSISTED_QUERY_MISMATCH' ? mismatch() : err;
        }
      })();
    },
    onExecute: ({ args }) => register(args),
    onSubscribe: ({ args }) => register(args),
  };
}
