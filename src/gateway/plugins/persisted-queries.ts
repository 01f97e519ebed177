/**
 * Persisted documents over HTTP, POST and GET: Apollo's automatic persisted queries (APQ) with
 * `@graphql-yoga/plugin-apq` and the store in Redis (src/services/persisted-queries/), and trusted documents
 * (PERSISTED_ONLY=on) with `@graphql-yoga/plugin-persisted-operations`.
 *
 * APQ: a request with `extensions.persistedQuery.sha256Hash` and no query runs the document registered under the
 * hash (`PersistedQueryNotFound` when none is, and the client sends it again with the query); one with both
 * registers the query, once its hash is checked. A document is registered only once its operation is admitted: it
 * parsed and passed validation and every document limit (MAX_QUERY_TOKENS, depth, cost, aliases), maintenance and the
 * rate limit (this plugin's execute hook comes after theirs), so a registration costs an operation of the client's
 * quota and a refused document is never stored. A persisted document goes through the same parse, validation and
 * limits as one sent whole. The manifest's documents (PERSISTED_DOCUMENTS) are found by hash before the store.
 *
 * PERSISTED_ONLY=on: a request names a trusted document by its hash (APQ's extension, or `documentId`), the
 * manifest's or one an admin registered; an unknown hash gets `PersistedQueryNotFound` with the code
 * PERSISTED_QUERY_NOT_IN_LIST (Apollo Router's and the yoga plugin's; Apollo Client and urql then send the document
 * whole, by its message), and a document sent whole gets PERSISTED_QUERY_ONLY, unless an admin sent it: it runs,
 * and with its hash it becomes trusted (the APQ store is not used).
 *
 * graphql-ws does not pass through yoga's request pipeline, so the parameters hook does not run there: ws.ts resolves
 * a subscribe message with `persistedDocument` below, the same rules.
 */
import { createHash } from 'node:crypto';
import { useAPQ } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { parse, type GraphQLError } from 'graphql';
import { ConfigError } from '../../config.js';
import { authenticate, type Context, type Viewer } from '../../context.js';
import type { Services } from '../../services/index.js';
import { httpStatusOf } from '../errors.js';
import type { RateLimitedContext } from './limits.js';

/** What clients (Apollo's PersistedQueryLink, urql's persistedExchange) look for, by message or by code. */
export const PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND';
/** PERSISTED_ONLY=on: no trusted document has the hash sent (Apollo Router's code). */
export const PERSISTED_QUERY_NOT_IN_LIST = 'PERSISTED_QUERY_NOT_IN_LIST';
/** PERSISTED_ONLY=on: a document sent whole by someone other than an admin, or no document named at all. */
export const PERSISTED_QUERY_ONLY = 'PERSISTED_QUERY_ONLY';

type Documents = Pick<Services, 'persistedQueries' | 'trustedDocuments'>;

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** The hash of APQ's extension (`{ persistedQuery: { version: 1, sha256Hash } }`), when a request carries one. */
export function persistedHash(extensions: unknown): string | undefined {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)
    ?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : undefined;
}

/**
 * The hash a request names its document by: APQ's, else `documentId` (graphql-codegen's client preset sends the bare
 * hash; the GraphQL-over-HTTP persisted documents appendix `sha256:<hex>`), from the body or, for GET, the URL.
 */
export function persistedId(params: { extensions?: unknown; documentId?: unknown }, url?: string): string | undefined {
  const documentId = params.documentId ?? (url === undefined ? null : new URL(url).searchParams.get('documentId'));
  return (
    persistedHash(params.extensions) ??
    (typeof documentId === 'string' ? documentId.replace(/^sha256:/, '') : undefined)
  );
}

/** A refusal's extensions: its code and, over HTTP (graphql-ws has none), its status (gateway/errors.ts#httpStatusOf). */
const coded = (code: string, http: boolean) => (http ? { code, http: { status: httpStatusOf(code) } } : { code });

function notFound(http = true): GraphQLError {
  return createGraphQLError('PersistedQueryNotFound', {
    extensions: coded(PERSISTED_QUERY_NOT_FOUND, http),
  });
}

/** The message is APQ's, on which Apollo Client and urql send the document whole (that an admin's registers it). */
function notInList(http = true): GraphQLError {
  return createGraphQLError('PersistedQueryNotFound', {
    extensions: coded(PERSISTED_QUERY_NOT_IN_LIST, http),
  });
}

function onlyTrusted(http = true): GraphQLError {
  return createGraphQLError(
    'PersistedQueryOnly: this gateway runs only trusted documents (PERSISTED_ONLY=on), named by their hash ' +
      '(extensions.persistedQuery.sha256Hash, or documentId): those of its manifest and those an admin registered; ' +
      'only an admin may send a document whole',
    { extensions: coded(PERSISTED_QUERY_ONLY, http) },
  );
}

function mismatch(http = true): GraphQLError {
  return createGraphQLError(
    'PersistedQueryMismatch: extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it ' +
      '(64 lowercase hex digits of the hash of its UTF-8, as sent); the query was neither run nor stored',
    { extensions: coded('BAD_USER_INPUT', http) },
  );
}

/** The document under `hash`: a trusted one; with PERSISTED_ONLY=off, else the APQ store's. */
function lookup({ persistedQueries, trustedDocuments }: Documents, hash: string) {
  if (trustedDocuments.only) return trustedDocuments.get({ hash });
  return trustedDocuments.known({ hash }) ?? persistedQueries.get({ sha256: hash });
}

/**
 * The document a subscribe message names (ws.ts): its `query` when it sends one (with a hash, the hash must be the
 * query's; with PERSISTED_ONLY=on, from an admin only), else the document persisted under its hash. Throws the
 * refusals of HTTP.
 */
export async function persistedDocument(
  documents: Documents,
  request: { query: string | undefined; extensions?: unknown; documentId?: unknown },
  viewer: () => Promise<Viewer | null>,
): Promise<string | undefined> {
  const { query } = request;
  const trusted = documents.trustedDocuments;
  if (query) {
    if (trusted.only && !(await trusted.mayRunWhole(await viewer()))) throw onlyTrusted(false);
    const sha256 = persistedHash(request.extensions);
    if (sha256 !== undefined && sha256Hex(query) !== sha256) throw mismatch(false);
    return query;
  }
  const hash = persistedId(request);
  if (hash === undefined) {
    if (trusted.only) throw onlyTrusted(false);
    return query;
  }
  const document = await lookup(documents, hash);
  if (document === undefined) throw trusted.only ? notInList(false) : notFound(false);
  return document;
}

/** The query and extensions of an operation: yoga's `params` over HTTP; ws.ts sets them for an APQ operation. */
export interface WithParams {
  params?: { query?: string | null; extensions?: Record<string, unknown> | null };
}

export function usePersistedQueries(services: Services): Plugin<Context & WithParams> {
  const { persistedQueries: store, trustedDocuments: trusted } = services;
  // A manifest's document that does not parse stops the start, as a malformed manifest does.
  for (const [hash, document] of trusted.manifestEntries()) {
    try {
      parse(document);
    } catch (err) {
      throw new ConfigError(`PERSISTED_DOCUMENTS: the document of "${hash}": ${(err as Error).message}`);
    }
  }
  const apq = useAPQ({
    store: {
      get: (sha256) => lookup(services, sha256),
      // Registration waits for the operation to be admitted (register below), so it is no part of parsing params.
      set: () => undefined,
    },
    hash: sha256Hex,
  });
  const apqParams = apq.onParams!;
  // Requests without a document: looked up by hash (APQ's or documentId); none named, with PERSISTED_ONLY=on, refused.
  const byId = usePersistedOperations<Record<string, unknown>>({
    getPersistedOperation: async (hash) => (await lookup(services, hash)) ?? null,
    extractPersistedOperationId: (params, request) => persistedId(params, request.url) ?? null,
    customErrors: {
      notFound: () => (trusted.only ? notInList() : notFound()),
      keyNotFound: () => onlyTrusted(),
      persistedQueryOnly: () => onlyTrusted(),
    },
  }).onParams!;

  /** Registers the operation's document under its hash (checked by then); a failure leaves it unregistered. */
  const register = ({ contextValue }: { contextValue: unknown }) => {
    const context = contextValue as Context & WithParams; // its `log` is made on first use: only on a failure
    const { params, viewer } = context;
    const sha256 = persistedHash(params?.extensions);
    // The manifest's documents are never registered. One held in memory is registered again all the same: an
    // operator may have removed it from Redis since (the stores answer "known" when it is there).
    if (sha256 === undefined || !params?.query || trusted.inManifest({ hash: sha256 })) return;
    const document = params.query;
    // PERSISTED_ONLY=on: only an admin's whole documents get this far.
    const registered = trusted.only
      ? viewer
        ? trusted.register(viewer, { sha256, document })
        : undefined
      : store.register({ sha256, document });
    if (typeof registered !== 'object') return;
    // The operation runs either way: it came with its document.
    return registered.then(
      () => undefined,
      (err: unknown) => context.log.warn({ err }, 'registering a persisted query failed'),
    );
  };

  /** APQ's hook, with its mismatch error saying more than "PersistedQueryMismatch". */
  const checkedApq = async (payload: Parameters<typeof apqParams>[0]) => {
    try {
      await apqParams(payload);
    } catch (err) {
      throw (err as GraphQLError).extensions?.code === 'PERSISTED_QUERY_MISMATCH' ? mismatch() : err;
    }
  };

  return {
    onParams(payload) {
      const params = payload.params as GraphQLParams & { documentId?: unknown };
      const hashed = persistedHash(params.extensions) !== undefined;
      if (!params.query) {
        if (hashed && !trusted.only) return checkedApq(payload);
        if (trusted.only || persistedId(params, payload.request.url) !== undefined) return byId(payload);
        return;
      }
      if (!trusted.only) return hashed ? checkedApq(payload) : undefined;
      // PERSISTED_ONLY=on: a whole document, from an admin only (the operation's context reuses the authentication).
      const server = payload.context as unknown as RateLimitedContext;
      return (server.authentication ??= authenticate(services, payload.request.headers.get('authorization')))
        .then(({ viewer }) => trusted.mayRunWhole(viewer))
        .then((admin) => {
          if (!admin) throw onlyTrusted();
          return hashed ? checkedApq(payload) : undefined;
        });
    },
    onExecute: ({ args }) => register(args),
    onSubscribe: ({ args }) => register(args),
  };
}
