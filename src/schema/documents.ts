import * as resolvers from '../resolvers/documents.js';
import type { Document, DocumentSummary } from '../services/documents/documents.js';
import type { DocumentHit } from '../services/documents/snippets.js';
import { builder } from './builder.js';
import { UserType } from './users.js';
import { TITLE_MAX } from '../services/documents/documents.js';
import { QUERY_MAX_CHARS, QUERY_MAX_WORDS } from '../services/documents/query.js';
import { BM25, DEFAULT_OFFSET, SEARCH_PAGE, type DocumentSearch } from '../services/documents/search.js';
import {
  DEFAULT_RANK_WEIGHTS,
  DEFAULT_SORT,
  DOCUMENT_SORTS,
  RANK_WEIGHT_MAX,
  type DocumentSort,
} from '../services/documents/sorts.js';
import { SNIPPET_CHARS } from '../services/documents/snippets.js';
import { enumValues, firstArg } from './args.js';

const SORT_DESCRIPTIONS = {
  UPDATED_DESC: 'Most recently updated first.',
  UPDATED_ASC: 'Least recently updated first.',
  VOTES_DESC: 'Most votes first.',
  TITLE_ASC: 'By the lower-cased title, in Unicode code point order.',
  TITLE_DESC: 'By the lower-cased title, descending.',
  ID_ASC: 'By id as a string.',
  ID_DESC: 'By id as a string, descending.',
  RANKED:
    "`weights.updated * updatedAt (seconds) + weights.votes * votes`, highest first (the book's search_and_zsort).",
  RELEVANCE: `BM25 (k1 = ${BM25.k1}, b = ${BM25.b}) over title and content, a title word counting SEARCH_TITLE_WEIGHT times.`,
} satisfies Record<DocumentSort, string>;

const DocumentSortType = builder.enumType('DocumentSort', {
  description: 'The order of searchDocuments; every sort breaks ties by id ascending.',
  values: enumValues(DOCUMENT_SORTS, SORT_DESCRIPTIONS),
});

const RankWeightsType = builder.inputType('RankWeights', {
  description: `The weights of the RANKED sort, each from -${RANK_WEIGHT_MAX} to ${RANK_WEIGHT_MAX}.`,
  fields: (t) => ({
    updated: t.float({ required: true, defaultValue: DEFAULT_RANK_WEIGHTS.updated }),
    votes: t.float({ required: true, defaultValue: DEFAULT_RANK_WEIGHTS.votes }),
  }),
});

/** Loaded with its content when the operation selects `content` (resolvers/selection.ts), else without. */
type LoadedDocument = DocumentSummary & Partial<Pick<Document, 'content'>>;

export const DocumentType = builder.objectRef<LoadedDocument>('Document').implement({
  description: 'A document: readable and searchable by every signed-in user; its author or an admin changes it.',
  fields: (t) => ({
    id: t.exposeID('id'),
    title: t.exposeString('title'),
    content: t.string({
      resolve: (d) => {
        if (d.content === undefined) throw new Error(`document "${d.id}" was loaded without its content`);
        return d.content;
      },
    }),
    author: t.field({ type: UserType, resolve: (d) => ({ username: d.author }) }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    votes: t.exposeInt('votes'),
    viewerVoted: t.exposeBoolean('viewerVoted', { description: 'Whether the viewer voted for it.' }),
  }),
});

const DocumentHitType = builder.objectRef<DocumentHit>('DocumentHit').implement({
  fields: (t) => ({
    document: t.field({ type: DocumentType, resolve: (h) => h.document }),
    score: t.exposeFloat('score', {
      description:
        'The value the sort orders by: updatedAt in seconds, votes, the RANKED sum or BM25; for the title and id sorts, the position (from 1).',
    }),
    matchedTerms: t.exposeStringList('matchedTerms', {
      description: 'The query words the document has (after prefix expansion and synonyms).',
    }),
    snippet: t.exposeString('snippet', {
      description: `At most ${SNIPPET_CHARS} characters of the content around the first match, matched words in <mark></mark>, the rest HTML-escaped.`,
    }),
  }),
});

const DocumentSearchType = builder.objectRef<DocumentSearch>('DocumentSearch').implement({
  fields: (t) => ({
    resultId: t.exposeID('resultId', {
      description: 'Pass it back to page through the same result set (SEARCH_RESULT_TTL seconds after its last use).',
    }),
    totalCount: t.exposeInt('totalCount', { description: 'Every match, when the search ran.' }),
    documents: t.field({
      type: [DocumentType],
      description: 'The page; a document deleted since the search ran is left out.',
      resolve: resolvers.searchedDocuments,
    }),
    hits: t.field({
      type: [DocumentHitType],
      description: 'The page with scores and snippets.',
      resolve: resolvers.hits,
    }),
  }),
});

builder.queryFields((t) => ({
  document: t.withAuth({ signedIn: true }).field({
    type: DocumentType,
    nullable: true,
    description: 'A document; null when there is none.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.document,
  }),
  searchDocuments: t.withAuth({ signedIn: true }).field({
    type: DocumentSearchType,
    description: `Searches documents: plain words must all match, \`+word\` is a synonym of the word before, \`-word\` excludes, \`word*\` matches words starting with it (case and stop words ignored; at most ${QUERY_MAX_CHARS} characters and ${QUERY_MAX_WORDS} words). \`resultId\` pages through an earlier result.`,
    args: {
      query: t.arg.string({ required: true }),
      sort: t.arg({ type: DocumentSortType, required: true, defaultValue: DEFAULT_SORT }),
      weights: t.arg({ type: RankWeightsType }),
      first: firstArg(t.arg, SEARCH_PAGE),
      offset: t.arg.int({ required: true, defaultValue: DEFAULT_OFFSET }),
      resultId: t.arg.id(),
    },
    resolve: resolvers.searchDocuments,
  }),
}));

builder.mutationFields((t) => ({
  indexDocument: t.withAuth({ signedIn: true }).field({
    type: DocumentType,
    description: `Creates or replaces a document (id: 1-64 of [A-Za-z0-9_.:-]; title: 1-${TITLE_MAX} characters; content: at most MAX_DOCUMENT_BYTES bytes). Only its author or an admin replaces it.`,
    args: {
      id: t.arg.id({ required: true }),
      title: t.arg.string({ required: true }),
      content: t.arg.string({ required: true }),
    },
    resolve: resolvers.indexDocument,
  }),
  deleteDocument: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description: 'Deletes a document (its author or an admin); false when there was none.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.deleteDocument,
  }),
  voteDocument: t.withAuth({ signedIn: true }).field({
    type: DocumentType,
    description: 'Votes for a document, once per user (voting again changes nothing); NOT_FOUND when there is none.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.voteDocument,
  }),
}));
