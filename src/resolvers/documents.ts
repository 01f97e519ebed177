/** Documents and search: any signed-in user reads and searches; the service lets only the author or an admin change. */
import type { Context } from '../context.js';
import { parseDocumentId, type Document } from '../services/documents/documents.js';
import type { DocumentSearch, DocumentSort, RankWeights } from '../services/documents/search.js';
import { describeHits, type DocumentHit } from '../services/documents/snippets.js';
import { requireViewer } from './auth.js';

type Args<T> = { [K in keyof T]?: T[K] | null };

export const document = (_root: unknown, args: { id: string }, ctx: Context): Promise<Document | null> => {
  requireViewer(ctx);
  return ctx.loaders.documents.load(parseDocumentId(args.id));
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
async function pageDocuments(search: DocumentSearch, ctx: Context): Promise<(Document | null)[]> {
  return (await ctx.loaders.documents.loadMany(search.hits.map((h) => h.id))).map((d) => {
    if (d instanceof Error) throw d;
    return d;
  });
}

export const searchedDocuments = async (search: DocumentSearch, _args: unknown, ctx: Context): Promise<Document[]> =>
  (await pageDocuments(search, ctx)).filter((d): d is Document => d !== null);

export const hits = async (search: DocumentSearch, _args: unknown, ctx: Context): Promise<DocumentHit[]> =>
  describeHits(search, await pageDocuments(search, ctx));

/** What a change returns is what the rest of the operation sees. */
function primed(ctx: Context, doc: Document): Document {
  ctx.loaders.documents.clear(doc.id).prime(doc.id, doc);
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
  return deleted;
};

export const voteDocument = async (_root: unknown, args: { id: string }, ctx: Context): Promise<Document> =>
  primed(ctx, await ctx.services.documents.voteDocument(requireViewer(ctx).username, args.id));
