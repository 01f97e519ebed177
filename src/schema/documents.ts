import * as resolvers from '../resolvers/documents.js';
import type { SearchPage } from '../resolvers/documents.js';
import type { Document, DocumentSummary } from '../services/documents/documents.js';
import type { DocumentHit } from '../services/documents/snippets.js';
import { builder } from './builder.js';
import { UserType } from './users.js';
import { TITLE_MAX } from '../services/documents/documents.js';
import { QUERY_MAX_CHARS, QUERY_MAX_WORDS } from '../services/documents/query.js';
import { BM25, DEFAULT_OFFSET, SEARCH_PAGE } from '../services/documents/search.js';
import {
  DEFAULT_RANK_WEIGHTS,
  DEFAULT_SORT,
  DOCUMENT_SORTS,
  RANK_WEIGHT_MAX,
  type DocumentSort,
} from '../services/documents/sorts.js';
import { SNIPPET_CHARS } from '../services/documents/snippets.js';
import { LEASE_SECONDS, LEASE_WAIT_SECONDS, type DocumentLease } from '../services/documents/leases.js';
import { enumValues, firstArg } from './args.js';
import {
  BUSIEST_PAGE,
  QUERY_SHAPES,
  RATE_WINDOW,
  SEARCH_QUERY_TEXT_MAX,
  SEARCH_TOP_KEPT,
  type BusyQuery,
  type SearchRate,
} from '../services/documents/activity.js';
import {
  LIVE_SORT_DEFAULT,
  SEARCH_CHANGE_KINDS,
  type SearchChange,
  type SearchChangeKind,
} from '../services/documents/live-search.js';

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

const DocumentSearchType = builder.objectRef<SearchPage>('DocumentSearch').implement({
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

const DocumentLeaseType = builder.objectRef<DocumentLease>('DocumentLease').implement({
  description:
    "A document's editing lease: one user edits it at a time (a reentrant lock with a fencing token). indexDocument and deleteDocument of a leased document need its `token` as `leaseToken`.",
  fields: (t) => ({
    documentId: t.exposeID('documentId'),
    token: t.exposeID('token', {
      description: 'What renewDocumentLease, releaseDocumentLease and the writes (`leaseToken`) take.',
    }),
    fencingToken: t.exposeString('fencingToken', {
      description:
        "Higher for every new holder of the document's lease (a decimal string: compare as a number); the same while its holder takes it again.",
    }),
    holder: t.field({ type: UserType, resolve: (l) => ({ username: l.holder }) }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    depth: t.exposeInt('depth', {
      description: 'How many times its holder took it without releasing it; it is free once released as many times.',
    }),
  }),
});

const SearchRateType = builder.objectRef<SearchRate>('SearchRate').implement({
  description: `Searches per second of one kind: a sort (DocumentSort), or a query shape (${QUERY_SHAPES.join(', ')}: several words, synonyms, exclusions, prefixes); one search counts under its sort and each shape it has.`,
  fields: (t) => ({
    kind: t.exposeString('kind'),
    from: t.expose('from', { type: 'DateTime', description: 'The first second of `counts`.' }),
    counts: t.exposeIntList('counts', { description: 'Searches in each second from `from`, one per second.' }),
  }),
});

const BusyQueryType = builder.objectRef<BusyQuery>('BusyQuery').implement({
  description: `A query among the hour's busiest: its text (lower case, single spaces, at most ${SEARCH_QUERY_TEXT_MAX} characters), its searches this hour (an upper bound once more than ${SEARCH_TOP_KEPT} queries were searched), and how many documents its last search found.`,
  fields: (t) => ({
    query: t.exposeString('query'),
    searches: t.exposeInt('searches'),
    found: t.exposeInt('found'),
  }),
});

const SearchActivityType = builder.objectRef<object>('SearchActivity').implement({
  description:
    "What searches the whole deployment ran (counted by every gateway process, added to Redis every METRICS_FLUSH_MS; live search's own evaluations left out).",
  fields: (t) => ({
    documents: t.int({ description: 'Documents indexed.', resolve: resolvers.indexedDocuments }),
    rates: t.field({
      type: [SearchRateType],
      description: 'Searches per second by kind over the last `seconds` whole seconds (kinds with none left out).',
      args: {
        seconds: firstArg(t.arg, RATE_WINDOW),
      },
      resolve: resolvers.searchRates,
    }),
    busiestQueries: t.field({
      type: [BusyQueryType],
      description: "This hour's busiest queries, busiest first.",
      args: { first: firstArg(t.arg, BUSIEST_PAGE) },
      resolve: resolvers.busiestQueries,
    }),
  }),
});

builder.queryFields((t) => ({
  documentLease: t.withAuth({ signedIn: true }).field({
    type: DocumentLeaseType,
    nullable: true,
    description:
      'Who edits a document now; null when nobody does. For those who may take its lease (its author and admins; FORBIDDEN for others).',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.documentLease,
  }),
  document: t.withAuth({ signedIn: true }).field({
    type: DocumentType,
    nullable: true,
    description: 'A document; null when there is none.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.document,
  }),
  searchActivity: t.withAuth({ admin: true }).field({
    type: SearchActivityType,
    description: "Admin: what searches the deployment runs (the dashboard's search panel).",
    resolve: () => ({}),
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
    description: `Creates or replaces a document (id: 1-64 of [A-Za-z0-9_.:-]; title: 1-${TITLE_MAX} characters; content: at most MAX_DOCUMENT_BYTES bytes). Only its author or an admin replaces it; while it is leased, only with the lease's token (else CONFLICT, nothing written).`,
    args: {
      id: t.arg.id({ required: true }),
      title: t.arg.string({ required: true }),
      content: t.arg.string({ required: true }),
      leaseToken: t.arg.id({ description: "The live editing lease's token; needed while the document is leased." }),
    },
    resolve: resolvers.indexDocument,
  }),
  deleteDocument: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description:
      "Deletes a document (its author or an admin) and its editing lease; false when there was none. While it is leased, only with the lease's token (else CONFLICT, nothing deleted).",
    args: {
      id: t.arg.id({ required: true }),
      leaseToken: t.arg.id({ description: "The live editing lease's token; needed while the document is leased." }),
    },
    resolve: resolvers.deleteDocument,
  }),
  voteDocument: t.withAuth({ signedIn: true }).field({
    type: DocumentType,
    description: 'Votes for a document, once per user (voting again changes nothing); NOT_FOUND when there is none.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.voteDocument,
  }),
  acquireDocumentLease: t.withAuth({ signedIn: true }).field({
    type: DocumentLeaseType,
    description: `Takes a document's editing lease for \`seconds\` (${LEASE_SECONDS.min}-${LEASE_SECONDS.max}); its author and admins may (FORBIDDEN for others). Taken again by its holder: the same lease, \`depth\` one higher, its end moved to \`seconds\` from now unless it was later. Held by another user: waits up to \`waitSeconds\` (0-${LEASE_WAIT_SECONDS.max}) for it to be released or to expire, then CONFLICT naming the holder. BUSY past LEASES_PER_USER_MAX leases or LEASE_WAITS_PER_USER_MAX waits of one user.`,
    args: {
      id: t.arg.id({ required: true }),
      seconds: t.arg.int({ required: true, defaultValue: LEASE_SECONDS.default }),
      waitSeconds: t.arg.int({ required: true, defaultValue: LEASE_WAIT_SECONDS.default }),
    },
    resolve: resolvers.acquireDocumentLease,
  }),
  renewDocumentLease: t.withAuth({ signedIn: true }).field({
    type: DocumentLeaseType,
    description: `Gives the holder's lease \`seconds\` (${LEASE_SECONDS.min}-${LEASE_SECONDS.max}) from now; CONFLICT when \`token\` is not the live lease's (it expired or was released), FORBIDDEN when it is another user's.`,
    args: {
      id: t.arg.id({ required: true }),
      token: t.arg.id({ required: true }),
      seconds: t.arg.int({ required: true, defaultValue: LEASE_SECONDS.default }),
    },
    resolve: resolvers.renewDocumentLease,
  }),
  releaseDocumentLease: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description:
      "Releases the holder's lease once: true when it is free now, false when it is still held (taken more times than released). CONFLICT when `token` is not the live lease's, FORBIDDEN when it is another user's.",
    args: { id: t.arg.id({ required: true }), token: t.arg.id({ required: true }) },
    resolve: resolvers.releaseDocumentLease,
  }),
}));

const CHANGE_KIND_DESCRIPTIONS = {
  ENTERED: 'The document entered the top (first, the current top, in order).',
  UPDATED: 'The document, in the top before and after, was written, voted for, or moved within the top.',
  LEFT: 'The document left the top (or was deleted); `document` and `position` are null.',
} satisfies Record<SearchChangeKind, string>;

const SearchChangeKindType = builder.enumType('SearchChangeKind', {
  values: enumValues(SEARCH_CHANGE_KINDS, CHANGE_KIND_DESCRIPTIONS),
});

const SearchChangeType = builder.objectRef<SearchChange>('SearchChange').implement({
  description:
    'A move of a live top. Applied in order (LEFT removes the document; ENTERED and UPDATED remove it when present and insert it at `position`), the changes keep a list equal to the top.',
  fields: (t) => ({
    kind: t.field({ type: SearchChangeKindType, resolve: (c) => c.kind }),
    documentId: t.exposeID('documentId'),
    document: t.field({ type: DocumentType, nullable: true, resolve: (c) => c.document }),
    score: t.exposeFloat('score', { description: "The sort's score, as searchDocuments' hits give it." }),
    position: t.exposeInt('position', {
      nullable: true,
      description: "The document's 0-based place in the top once this change is applied; null for LEFT.",
    }),
  }),
});

builder.subscriptionFields((t) => ({
  searchChanged: t.withAuth({ signedIn: true }).field({
    type: SearchChangeType,
    description: `Follows the top \`first\` results of a search (the query language of searchDocuments): the current top as ENTERED, in order, then ENTERED, UPDATED and LEFT as indexDocument, voteDocument and deleteDocument move documents into, within and out of it. A subscription made again (a reconnect) gets the current top again. RELEVANCE tops converge to searchDocuments' within LIVE_RECONCILE_MS of the last write. At most LIVE_QUERIES_PER_SOCKET per WebSocket (BUSY past it).`,
    args: {
      query: t.arg.string({ required: true }),
      sort: t.arg({ type: DocumentSortType, required: true, defaultValue: LIVE_SORT_DEFAULT }),
      first: firstArg(t.arg, SEARCH_PAGE),
    },
    subscribe: resolvers.subscribeSearch,
    resolve: (change: SearchChange) => change,
  }),
  documentChanged: t.withAuth({ signedIn: true }).field({
    type: DocumentType,
    nullable: true,
    description:
      'Follows a document: the document now (null when there is none), then again after each change (indexDocument, voteDocument; null once deleted, and the document again if it is indexed anew). A subscription made again after a lost connection starts with the current state.',
    args: { id: t.arg.id({ required: true }) },
    subscribe: resolvers.subscribeDocument,
    resolve: (doc: LoadedDocument | null) => doc,
  }),
}));
