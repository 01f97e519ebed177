/**
 * Documents and search: any signed-in user reads and searches (the schema's scope); the service lets only the author
 * or an admin change. A change primes (or forgets) the operation's documents in one call.
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { Context, SignedIn } from '../context.js';
import type { Document, DocumentSummary } from '../services/documents/documents.js';
import type { DocumentLease } from '../services/documents/leases.js';
import type { DocumentSearch, SearchArgs } from '../services/documents/search.js';
import type { BusyQuery, SearchRate } from '../services/documents/activity.js';
import type { SearchChange } from '../services/documents/live-search.js';
import type { DocumentSort } from '../services/documents/sorts.js';
import { describeHits, type DocumentHit } from '../services/documents/snippets.js';
import { selectsAny } from './selection.js';

/** A document's content is loaded only when the operation shows it: it may be most of the document's bytes. */
const CONTENT = new Set(['content']);
const reading = (info: GraphQLResolveInfo) => ({ content: selectsAny(info, CONTENT) });
/** A live search's moves read their documents only when the operation selects them. */
const DOCUMENT = new Set(['document']);

export const document = (
  _root: unknown,
  args: { id: string },
  ctx: SignedIn,
  info: GraphQLResolveInfo,
): Promise<DocumentSummary | null> => ctx.loaders.documents.load(args.id, reading(info));

/** A search's page as the schema resolves it: `content` says whether its documents are loaded with their content. */
export type SearchPage = DocumentSearch & { content: boolean };

/** Hits show the content (their snippets): when the operation selects them, `documents` loads with content too. */
const PAGE_CONTENT = new Set(['content', 'hits']);
/** The fields that show the page's documents. */
const PAGE = new Set(['documents', 'hits']);

/** The page's documents through the operation's loader (one round trip per shard); null where one was deleted. */
const pageDocuments = (search: SearchPage, ctx: Context) =>
  ctx.loaders.documents.loadMany(
    search.hits.map((h) => h.id),
    { content: search.content },
  );

/**
 * The search, and the load of its page's documents when the operation shows them: asked for here, in the turn the
 * search ends, rather than once execution reaches `documents` or `hits`, which then find them in the loader. A
 * failed load is theirs to report.
 */
export const searchDocuments = async (
  _root: unknown,
  args: SearchArgs,
  ctx: SignedIn,
  info: GraphQLResolveInfo,
): Promise<SearchPage> => {
  const search = {
    ...(await ctx.services.search.searchDocuments(ctx.viewer.username, args)),
    content: selectsAny(info, PAGE_CONTENT),
  };
  if (selectsAny(info, PAGE)) pageDocuments(search, ctx).catch(() => undefined);
  return search;
};

/** The page's documents, deleted ones left out (loaded as `hits` loads them when the operation selects both). */
export const searchedDocuments = async (search: SearchPage, _args: unknown, ctx: Context): Promise<DocumentSummary[]> =>
  (await pageDocuments(search, ctx)).filter((d): d is DocumentSummary => d !== null);

/** Loaded with content, as `content` is whenever `hits` is selected (PAGE_CONTENT): the same load. */
export const hits = async (search: SearchPage, _args: unknown, ctx: Context): Promise<DocumentHit[]> =>
  describeHits(
    search,
    await ctx.loaders.documents.loadMany(
      search.hits.map((h) => h.id),
      { content: true },
    ),
  );

export const indexDocument = async (
  _root: unknown,
  args: { id: string; title: string; content: string; leaseToken?: string | null },
  ctx: SignedIn,
): Promise<Document> =>
  ctx.loaders.documents.prime(await ctx.services.documents.indexDocument(ctx.viewer.username, args));

export const deleteDocument = async (
  _root: unknown,
  args: { id: string; leaseToken?: string | null },
  ctx: SignedIn,
): Promise<boolean> => {
  const deleted = await ctx.services.documents.deleteDocument(ctx.viewer.username, args);
  ctx.loaders.documents.forget(args.id);
  return deleted;
};

/** The document now, then after each change (null: none, or deleted); its content read only when selected. */
export const subscribeDocument = (
  _root: unknown,
  args: { id: string },
  ctx: SignedIn,
  info: GraphQLResolveInfo,
): AsyncIterable<DocumentSummary | null> =>
  ctx.services.liveDocuments.documentChanged(ctx.viewer.username, { id: args.id, ...reading(info) });

/**
 * The top of a search, then its moves; its documents read only when `document` is selected, their content only
 * when it is. Over WebSocket, the socket's
 * receipt confirmer (one per socket) names the socket that LIVE_QUERIES_PER_SOCKET counts per.
 */
export const subscribeSearch = (
  _root: unknown,
  args: { query: string; sort: DocumentSort; first: number },
  ctx: SignedIn,
  info: GraphQLResolveInfo,
): AsyncIterable<SearchChange> =>
  ctx.services.liveSearch.searchChanged(
    ctx.viewer.username,
    { ...args, ...reading(info), document: selectsAny(info, DOCUMENT) },
    ctx.confirmReceipt,
  );

export const voteDocument = async (_root: unknown, args: { id: string }, ctx: SignedIn): Promise<Document> =>
  ctx.loaders.documents.prime(await ctx.services.documents.voteDocument(ctx.viewer.username, args));

export const documentLease = (_root: unknown, args: { id: string }, ctx: SignedIn): Promise<DocumentLease | null> =>
  ctx.services.leases.documentLease(ctx.viewer.username, args);

export const acquireDocumentLease = (
  _root: unknown,
  args: { id: string; seconds: number; waitSeconds: number },
  ctx: SignedIn,
): Promise<DocumentLease> => ctx.services.leases.acquireDocumentLease(ctx.viewer.username, args);

export const renewDocumentLease = (
  _root: unknown,
  args: { id: string; token: string; seconds: number },
  ctx: SignedIn,
): Promise<DocumentLease> => ctx.services.leases.renewDocumentLease(ctx.viewer.username, args);

export const releaseDocumentLease = (
  _root: unknown,
  args: { id: string; token: string },
  ctx: SignedIn,
): Promise<boolean> => ctx.services.leases.releaseDocumentLease(ctx.viewer.username, args);

/** searchActivity's fields (its scope is the admin's, on the root field). */
export const indexedDocuments = (_root: object, _args: unknown, ctx: Context): Promise<number> =>
  ctx.services.searchActivity.documents();

export const searchRates = (_root: object, args: { seconds: number }, ctx: Context): Promise<SearchRate[]> =>
  ctx.services.searchActivity.rates(args);

export const busiestQueries = (_root: object, args: { first: number }, ctx: Context): Promise<BusyQuery[]> =>
  ctx.services.searchActivity.busiest(args);
