/** Documents and search: any signed-in user reads and searches; the service lets only the author or an admin change. */
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from '../context.js';
import { parseDocumentId, type Document, type DocumentSummary } from '../services/documents/documents.js';
import type { DocumentSearch, DocumentSort, RankWeights } from '../services/documents/search.js';
import { describeHits, type DocumentHit } from '../services/documents/snippets.js';
import { requireViewer } from './auth.js';
import { selectsAny } from './selection.js';

type Args<T> = { [K in keyof T]?: T[K] | null };

/** A document's content is loaded only when the operation shows it: it may be most of the document's bytes. */
const CONTENT = new Set(['content']);
const loaderFor = (ctx: Context, info: GraphQLResolveInfo) =>
  selectsAny(info, CONTENT) ? ctx.loaders.documents : ctx.loaders.documentSummaries;

export const document = (
  _root: unknown,
  args: { id: string },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<DocumentSummary | null> => {
  requireViewer(ctx);
  return loaderFor(ctx, info).load(parseDocumentId(args.id));
};

export const searchDocuments = (
  _root: unknown,
  args: { query: string } & Args<{
    sort: DocumentSort;
    weights: Args<RankWeights>;
    first: number;
    offset: number;
    resultId: string;
  }>,
  ctx: Context,
): Promise<DocumentSearch> =>
  ctx.services.search.searchDocuments(requireViewer(ctx).username, {
    query: args.query,
    sort: args.sort ?? 'UPDATED_DESC',
    weights: args.weights && { updated: args.weights.updated ?? 1, votes: args.weights.votes ?? 0 },
    first: args.first ?? 10,
    offset: args.offset ?? 0,
    resultId: args.resultId,
  });

/** The page's documents through the request's DataLoader (one round trip per shard). */
async function pageDocuments<D>(
  search: DocumentSearch,
  loader: { loadMany(ids: string[]): Promise<(D | null | Error)[]> },
): Promise<(D | null)[]> {
  return (await loader.loadMany(search.hits.map((h) => h.id))).map((d) => {
    if (d instanceof Error) throw d;
    return d;
  });
}

export const searchedDocuments = async (
  search: DocumentSearch,
  _args: unknown,
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<DocumentSummary[]> =>
  (await pageDocuments(search, loaderFor(ctx, info))).filter((d): d is DocumentSummary => d !== null);

export const hits = async (search: DocumentSearch, _args: unknown, ctx: Context): Promise<DocumentHit[]> =>
  describeHits(search, await pageDocuments(search, ctx.loaders.documents));

/** What a change returns is what the rest of the operation sees. */
function primed(ctx: Context, doc: Document): Document {
  ctx.loaders.documents.clear(doc.id).prime(doc.id, doc);
  ctx.loaders.documentSummaries.clear(doc.id).prime(doc.id, doc);
  return doc;
}

export const indexDocument = async (
  _root: unknown,
  args: { id: string; title: string; content: string },
  ctx: Context,
): Promise<Document> =>
  primed(
    ctx,
    await ctx.services.documents.indexDocument(requireViewer(ctx).username, args.id, args.title, args.content),
  );

export const deleteDocument = async (_root: unknown, args: { id: string }, ctx: Context): Promise<boolean> => {
  const deleted = await ctx.services.documents.deleteDocument(requireViewer(ctx).username, args.id);
  ctx.loaders.documents.clear(args.id);
  ctx.loaders.documentSummaries.clear(args.id);
  return deleted;
};

export const voteDocument = async (_root: unknown, args: { id: string }, ctx: Context): Promise<Document> =>
  primed(ctx, await ctx.services.documents.voteDocument(requireViewer(ctx).username, args.id));
