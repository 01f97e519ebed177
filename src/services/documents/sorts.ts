/**
 * The sorts of searchDocuments, stated once in SORTS: the DocumentSort type and the GraphQL enum (schema/documents.ts,
 * whose descriptions must name every sort) come from its keys; what each shard's script does for a sort, how the
 * shards' orders merge and what a hit's score shows come from its entries. searchDocuments.lua names no sort.
 */
import type { ShardOrder } from '../../redis/documents/commands.js';

/** RANKED's weights: it orders by `updated * updatedAt (seconds) + votes * votes`, highest first. */
export interface RankWeights {
  updated: number;
  votes: number;
}
/** RANKED's weights when none are given, and each weight's default (the book's search_and_zsort: by time). */
export const DEFAULT_RANK_WEIGHTS: Readonly<RankWeights> = { updated: 1, votes: 0 };
/** The weights of RANKED are at most this large (either sign). */
export const RANK_WEIGHT_MAX = 1e6;

/** What a sort means. */
interface Sort {
  /** What each shard scores a match by (ShardOrder.weights); RANKED's come from the search's weights. */
  weights: ShardOrder['weights'] | ((w: RankWeights) => ShardOrder['weights']);
  /**
   * How each shard then rescores its matches (ShardOrder.then). Positions cannot be compared across shards, so the
   * shards' orders of a sort by position merge by comparing what the positions stand for (titles, ids); the others
   * by (score, id).
   */
  then?: ShardOrder['then'];
  /** A hit's score from its stored one; 'position' for its position in the result (from 1). */
  score: ((stored: number) => number) | 'position';
}

const negated = (stored: number) => -stored || 0;

export const SORTS = {
  UPDATED_DESC: { weights: { updated: -1 }, score: (stored) => -stored / 1000 },
  UPDATED_ASC: { weights: { updated: 1 }, score: (stored) => stored / 1000 },
  VOTES_DESC: { weights: { votes: -1 }, score: negated },
  TITLE_ASC: { weights: { titleScore: 1 }, then: { position: 'title', descending: false }, score: 'position' },
  TITLE_DESC: { weights: { titleScore: -1 }, then: { position: 'title', descending: true }, score: 'position' },
  ID_ASC: { weights: {}, score: 'position' },
  ID_DESC: { weights: {}, then: { position: 'id', descending: true }, score: 'position' },
  // negated, so that ascending is best first; updatedAt in ms
  RANKED: { weights: (w) => ({ updated: -w.updated / 1000, votes: -w.votes }), score: negated },
  RELEVANCE: { weights: {}, then: 'bm25', score: negated },
} satisfies Record<string, Sort>;

export type DocumentSort = keyof typeof SORTS;
export const DOCUMENT_SORTS = Object.keys(SORTS) as DocumentSort[];
export const DEFAULT_SORT: DocumentSort = 'UPDATED_DESC';

/** What `sort` means. */
export const sortOf = (sort: DocumentSort): Sort => SORTS[sort];

/** Whether `sort` is ordered by the search's weights (RANKED). */
export const weighted = (sort: DocumentSort): boolean => typeof sortOf(sort).weights === 'function';

/** What each shard does for `sort` (`weights`: the search's, when it is weighted). */
export function shardOrder(sort: DocumentSort, weights: RankWeights | null): ShardOrder {
  const s = sortOf(sort);
  return {
    weights: typeof s.weights === 'function' ? s.weights(weights ?? DEFAULT_RANK_WEIGHTS) : s.weights,
    then: s.then,
  };
}
