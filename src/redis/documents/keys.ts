/**
 * Keys of the documents index. Everything about a document (its hash, postings, sort keys) and the result sets
 * of searches live in its index shard, one hash tag per shard (`docs:{s<n>}:...`), so indexing is one script.
 */
import type { Keyspace } from '../keys.js';

export type DocumentKeys = ReturnType<typeof documentKeys>;
export type ShardKeys = ReturnType<DocumentKeys['shard']>;

export function documentKeys({ key }: Keyspace) {
  return {
    /**
     * What searches the deployment ran (src/services/documents/activity.ts), on one slot of its own: every key
     * expires, and each is bounded by the script that writes it (countSearch).
     */
    activity: {
      /** hash: "<kind> <second>" → searches of that kind in that second (s since the epoch), of one minute */
      rate: (minute: number) => key('docs', 'activity', 'rate', minute),
      /** sorted set: query text → its searches in one hour, at most SEARCH_TOP_KEPT (Space-Saving) */
      queries: (hour: number) => key('docs', 'activity', 'queries', hour),
      /** hash: query text → how many documents its last search found, for the members of `queries` */
      results: (hour: number) => key('docs', 'activity', 'results', hour),
    },
    /**
     * A user's searches, on the user's slot: what one script checks and changes when a search starts (the bound on
     * searches at once, the user's live results) and ends (the result's description).
     */
    searcher: (user: string) => ({
      /** sorted set: holder id → expiry (ms), the searches of the user running now (at most SEARCH_CONCURRENCY) */
      searching: key('docs', `user:${user}`, 'searching'),
      /**
       * sorted set: the user's live result ids by last use (ms), at most SEARCH_RESULTS_PER_USER; an entry older
       * than SEARCH_RESULT_TTL is expired. Expires with the newest use.
       */
      results: key('docs', `user:${user}`, 'results'),
      /** hash: result id → JSON of its description (ResultDescription), for the live ids of `results` */
      descriptions: key('docs', `user:${user}`, 'result', 'descriptions'),
      /** list: "<score> <id>" of every shard's matches of a result in order, made for deep pages */
      merged: (resultId: string) => key('docs', `user:${user}`, 'result', resultId, 'merged'),
    }),
    shard: (n: number) => {
      const k = (...parts: string[]) => key('docs', `s${n}`, ...parts);
      return {
        /**
         * hash: title, content, author, updated (ms), votes, ver (bumped by each change), words (space-separated),
         * head (the shard's change counter at the document's last change or vote: what `documentChanged` watches)
         */
        doc: (id: string) => k('doc', id),
        /**
         * sharded pub/sub channel: the document's doorbell (lib/live-document.lua), rung with "<doc key> <head>" when
         * it is indexed or voted for, with "<doc key>" when it is deleted
         */
        bell: (id: string) => k('doc', id, 'bell'),
        /**
         * string: the shard's change counter, moved by every change and vote (searches share matches while it
         * stays); a document's `ver` is its value at the document's last change
         */
        version: k('version'),
        /**
         * string with a lease (PX): the document's editing lease, a reentrant lock (lib/reentrant.lua) whose owner is
         * the user holding it: "<user> <token> <depth> <fencing token>", + once someone waits for it
         */
        lease: (id: string) => k('lease', id),
        /** sharded pub/sub channel, rung with "<lease key> free:<token>" when a lease someone waits for is freed */
        leaseBell: (id: string) => k('lease', id, 'bell'),
        /**
         * string counter, never expires: the fencing tokens of the shard's leases, one per new holder (shard-wide, so
         * a document's fencing tokens grow even across its deletion, and no counter is left behind per document)
         */
        leaseFences: k('leaseFences'),
        /** set: who voted for the document */
        voters: (id: string) => k('voters', id),
        /** sorted set: id → the word's weighted frequency in that document (the postings) */
        word: (word: string) => k('word', word),
        /** sorted set: id → updated (ms); its size is the shard's number of documents */
        updated: k('updated'),
        /** sorted set: id → votes */
        votes: k('votes'),
        /** sorted set: id → string_to_score of the lower-cased title */
        titleScores: k('titleScores'),
        /** hash: id → the lower-cased title (orders titles sharing their first six bytes) */
        titles: k('titles'),
        /** hash: id → the document's weighted length */
        lengths: k('lengths'),
        /** string: the sum of the lengths */
        lengthSum: k('lengthSum'),
        /**
         * string counter: the shard's change log's last sequence number (lib/live-search.lua), the head that live
         * search watches
         */
        liveSeq: k('live', 'seq'),
        /**
         * sorted set: the shard's change log, sequence number -> "<seq> <i|v|d> <id> <word> ...": each index, vote
         * and delete with the document's words before and after it; the newest LIVE_LOG_KEEP (lib/live-search.lua)
         */
        liveLog: k('live', 'log'),
        /** sharded pub/sub channel: the change log's doorbell, rung with "<liveSeq key> <seq>" */
        liveBell: k('live', 'bell'),
        /** sorted set, every score 0: the words indexed in the shard, read with ZRANGEBYLEX for prefixes */
        vocabulary: k('vocabulary'),
        /** hash: word → the number of the shard's documents having it */
        df: k('df'),
        /** sorted set: scratch of searchStats, deleted before it returns */
        statsScratch: k('stats', 'scratch'),
        /** string, on shard 0 only: the SEARCH_SHARDS the index was built with */
        shards: k('shards'),
        /**
         * A query's matches in this shard at one state of the index: every search of the same query (`query`, a
         * hash of all that decides its order) that finds the shard at `version` shares them. Kept until unused for
         * the result TTL, or until the search that made them is evicted.
         */
        matches: (query: string, version: string) => ({
          /** sorted set: the shard's matches, scored so that ascending (score, id) is the sort's order */
          hits: k('result', 'q', query, version),
          /** string: how many matched, past the most kept too; the mark that the matches exist (0 has no hits) */
          total: k('result', 'q', query, version, 'total'),
        }),
        /** Scratch keys of one search's script run in this shard, deleted before it returns. */
        scratch: (resultId: string, i: number) => k('result', resultId, 'scratch', String(i)),
      };
    },
  };
}
