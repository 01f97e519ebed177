/**
 * The documents domain's door to Redis: documents, votes and search over the sharded index. The services of
 * src/services/documents/ reach Redis only through the object documentCommands() returns. Every command but
 * claimShardCount and those of a user's searches (beginSearch, endSearch, saveMerged, deleteMerged: on the user's
 * slot) runs in one shard, the `shard` it is given (a handle from `shards()`).
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import type { Head } from '../mailbox/commands.js';
import {
  reentrantAcquired,
  reentrantState,
  type ReentrantBusy,
  type ReentrantHeld,
  type ReentrantReply,
} from '../reentrant.js';
import { pairs } from '../replies.js';
import { script } from '../scripts.js';
import { refused, type Refused } from '../status.js';
import { documentKeys, type ShardKeys } from './keys.js';

const indexDocumentScript = script<number | [number, number, number, 0 | 1]>('indexDocument');
const deleteDocumentScript = script<number>('deleteDocument');
const acquireLeaseScript = script<ReentrantReply | number>('acquireLease');
const renewLeaseScript = script<[number, number] | number>('renewLease');
const releaseLeaseScript = script<number>('releaseLease');
const voteDocumentScript = script<number>('voteDocument');
const expandPrefixesScript = script<(string | number)[][]>('expandPrefixes');
const searchStatsScript = script<(number | string)[]>('searchStats');
const searchDocumentsScript = script<[number, string[], 0 | 1] | [number, string]>('searchDocuments');
const readHitsScript = script<string[] | null>('readHits');
const readDocumentsScript = script<(false | [string, string, string, string, string | null, 0 | 1])[]>('readDocuments');
const beginSearchScript = script<0 | [1, string | null, string[] | null, (string | null)[]]>('beginSearch');
const endSearchScript = script<0 | 1>('endSearch');
const countSearchesScript = script<number>('countSearches');

export type DocumentCommands = ReturnType<typeof documentCommands>;

/**
 * An entry of a shard's change log (lib/live-search.lua): a change of document `id`, with its words after it
 * (`words`, none once deleted) and those it had before and no longer has (`dropped`), and its sort keys after it.
 */
export interface LiveChange {
  seq: number;
  /** i: indexed (created or replaced), v: voted for, d: deleted */
  kind: 'i' | 'v' | 'd';
  id: string;
  words: string[];
  dropped: string[];
  /** When it was last indexed (ms) and its votes; undefined once deleted. */
  updated?: number;
  votes?: number;
  /** Its lower-cased title: given by an index only (a vote leaves it as it was). */
  title?: string;
  /** An index's weighted frequency of each of `words` (in their order) and the document's weighted length. */
  frequencies?: number[];
  length?: number;
}

/** One shard of the index: which shard a command runs in. */
export type Shard = ShardKeys;

/** What a change needs to know of the stored document first: its version ('0': none), author and words. */
export interface DocumentState {
  version: string;
  author: string | null;
  words: string[];
}

/** Who may change a document, as the script checks it. */
interface Change {
  shard: Shard;
  id: string;
  /** The version the caller read ('0': none); otherwise refused with CHANGED. */
  expected: string;
  user: string;
  isAdmin: boolean;
  /** The editing lease's token the caller shows ('': none); otherwise refused with LEASED while it is leased. */
  leaseToken: string;
}

/** A stored document as a viewer sees it; its content only when it was asked for. */
export interface StoredDocument {
  title: string;
  content?: string;
  author: string;
  updatedMs: number;
  votes: number;
  viewerVoted: boolean;
}

/**
 * How a shard orders its matches (ascending (score, id) is the order), whatever sort asks it: a match's score is
 * the sum of its `updated` (ms), `votes` and `titleScore` (string_to_score of the lower-cased title), each times
 * its weight, those without one left out (none: every score 0, so the order is by id). `then` replaces the scores:
 * by -BM25, or by positions in the order of the whole lower-cased titles (within the runs that tie on titleScore)
 * or of the ids, those orders read from the end when `descending`.
 */
export interface ShardOrder {
  weights: { readonly updated?: number; readonly votes?: number; readonly titleScore?: number };
  then?: 'bm25' | { readonly position: 'title' | 'id'; readonly descending: boolean };
}

/** An entry of a shard's (or the merged) order: a document id and its stored score. */
export type Entry = [id: string, score: number];

/**
 * Which matches of a shard a search shows: those of query `query` (a hash of all that decides their order) at the
 * shard's `version`, shared by every search of the same query that found the shard in the same state.
 */
export interface Matches {
  query: string;
  version: string;
}

/**
 * What a search's result is, kept in its home shard: which query it answers, each shard's matches (whether this
 * search made them: only then does its eviction delete them) and how many, its words.
 */
export interface ResultDescription {
  fingerprint: string;
  query: string;
  versions: string[];
  made: boolean[];
  counts: number[];
  terms: string[];
}

export function documentCommands(redis: RedisClient, space: Keyspace) {
  const keys = documentKeys(space);
  return {
    /** The index's `count` shards, shard n at n. */
    shards(a: { count: number }): Shard[] {
      return Array.from({ length: a.count }, (_, n) => keys.shard(n));
    },

    /** The SEARCH_SHARDS the index was built with (kept in shard 0): `count` when it is new. */
    async claimShardCount(a: { count: number }): Promise<number> {
      const { shards } = keys.shard(0);
      await redis.set(shards, a.count, 'NX');
      return Number(await redis.get(shards));
    },

    /** The ids of the documents of one shard, in batches (ZSCAN: what the documents' Bloom filter is filled from). */
    async *documentIds({ shard: s }: { shard: Shard }): AsyncGenerator<string[]> {
      let cursor = '0';
      do {
        const [next, flat] = await redis.zscan(s.updated, cursor, 'COUNT', 1000);
        cursor = next;
        const ids = flat.filter((_, i) => i % 2 === 0);
        if (ids.length > 0) yield ids;
      } while (cursor !== '0');
    },

    async readDocumentState({ shard: s, id }: { shard: Shard; id: string }): Promise<DocumentState> {
      const [version, author, words] = await redis.hmget(s.doc(id), 'ver', 'author', 'words');
      return { version: version ?? '0', author: author ?? null, words: words ? words.split(' ') : [] };
    },

    /**
     * Creates or replaces document `id`: its new words with their weighted frequencies, and the words it drops.
     * Returns when it was updated, its votes and whether `user` voted for it.
     */
    async indexDocument(
      a: Change & {
        title: string;
        titleKey: string;
        titleScore: number;
        content: string;
        length: number;
        frequencies: ReadonlyMap<string, number>;
        dropped: readonly string[];
      },
    ): Promise<{ updatedMs: number; votes: number; viewerVoted: boolean } | Refused> {
      const s = a.shard;
      const words = [...a.frequencies.keys()];
      const reply = await indexDocumentScript(
        redis,
        [
          s.doc(a.id),
          s.voters(a.id),
          s.version,
          s.updated,
          s.votes,
          s.titleScores,
          s.titles,
          s.lengths,
          s.lengthSum,
          s.vocabulary,
          s.df,
          s.lease(a.id),
          s.liveSeq,
          s.liveLog,
          ...words.map(s.word),
          ...a.dropped.map(s.word),
        ],
        [
          a.id,
          a.expected,
          a.user,
          a.isAdmin ? 1 : 0,
          a.title,
          a.titleKey,
          a.titleScore,
          a.content,
          a.length,
          // frequencies as strings: ZADD takes them as they are (redis.call would format a Lua number with %.17g)
          JSON.stringify({ words, frequencies: [...a.frequencies.values()].map(String), dropped: a.dropped }),
          a.leaseToken,
          s.bell(a.id),
          s.liveBell,
        ],
      );
      return typeof reply === 'number'
        ? refused(reply)
        : { updatedMs: reply[1], votes: reply[2], viewerVoted: reply[3] === 1 };
    },

    /** Deletes document `id` and its postings (`words`, as read); false when there was none. */
    async deleteDocument(a: Change & { words: readonly string[] }): Promise<boolean | Refused> {
      const s = a.shard;
      const reply = await deleteDocumentScript(
        redis,
        [
          s.doc(a.id),
          s.voters(a.id),
          s.updated,
          s.votes,
          s.titleScores,
          s.titles,
          s.lengths,
          s.lengthSum,
          s.vocabulary,
          s.df,
          s.lease(a.id),
          s.liveSeq,
          s.liveLog,
          s.version,
          ...a.words.map(s.word),
        ],
        [
          a.id,
          a.expected,
          a.user,
          a.isAdmin ? 1 : 0,
          a.leaseToken,
          s.leaseBell(a.id),
          s.bell(a.id),
          s.liveBell,
          ...a.words,
        ],
      );
      return reply < 0 ? refused(reply) : reply === 1;
    },

    /** What a live subscription of document `id` watches: its head (a field of its hash) and its doorbell. */
    documentHead({ shard: s, id }: { shard: Shard; id: string }): Head {
      return { key: s.doc(id), field: 'head', channel: s.bell(id) };
    },

    /** What live search watches of a shard: its change log's sequence, and the log's doorbell. */
    liveHead({ shard: s }: { shard: Shard }): Head {
      return { key: s.liveSeq, channel: s.liveBell };
    },

    /** The shard's change log's sequence now (0: nothing logged yet). */
    async liveSeq({ shard: s }: { shard: Shard }): Promise<number> {
      return Number(await redis.get(s.liveSeq));
    },

    /**
     * Up to `count` entries of the shard's change log after sequence number `after`, in order; `gap` when entries
     * after `after` were trimmed before they were read (the reader then searches again everything it follows).
     */
    async readLiveLog(a: {
      shard: Shard;
      after: number;
      count: number;
    }): Promise<{ entries: LiveChange[]; gap: boolean }> {
      const s = a.shard;
      const [[, members], [, seq]] = (await redis
        .multi()
        .zrangebyscore(s.liveLog, `(${a.after}`, '+inf', 'LIMIT', 0, a.count)
        .get(s.liveSeq)
        .exec()) as [[unknown, string[]], [unknown, string | null]];
      const entries = members.map((m): LiveChange => {
        const at = m.indexOf(' ');
        const e = JSON.parse(m.slice(at + 1)) as {
          k: LiveChange['kind'];
          id: string;
          w: string;
          b: string;
          u?: number;
          n?: number;
          t?: string;
          f?: string;
          l?: string;
        };
        const split = (words: string) => words.split(' ').filter((w) => w !== '');
        return {
          seq: Number(m.slice(0, at)),
          kind: e.k,
          id: e.id,
          words: split(e.w),
          dropped: split(e.b),
          updated: e.u,
          votes: e.n,
          title: e.t,
          frequencies: e.f === undefined ? undefined : split(e.f).map(Number),
          length: e.l === undefined ? undefined : Number(e.l),
        };
      });
      const next = entries[0]?.seq ?? Number(seq ?? 0) + 1;
      return { entries, gap: next > a.after + 1 };
    },

    /** What waiters for document `id`'s editing lease watch: its key, and the doorbell its releases ring. */
    leaseHead({ shard: s, id }: { shard: Shard; id: string }): Head {
      return { key: s.lease(id), channel: s.leaseBell(id) };
    },

    /** Document `id`'s editing lease; null when it is free. */
    async readLease({ shard: s, id }: { shard: Shard; id: string }): Promise<ReentrantHeld | null> {
      const [[, value], [, pttl]] = (await redis.multi().get(s.lease(id)).pttl(s.lease(id)).exec()) as [
        [unknown, string | null],
        [unknown, number],
      ];
      return reentrantState(value, pttl);
    },

    /**
     * Takes document `id`'s editing lease for `user` (a new lease with `token`), or enters it once more when `user`
     * holds it; refused, the holder and the ms left on its lease (a caller that `waits` is registered, so that the
     * release rings; `others`: others of this process wait, so it is taken registered). NOT_FOUND: no such
     * document; NOT_OWNER: `user` is neither its author nor an admin (`isAdmin`).
     */
    async acquireLease(a: {
      shard: Shard;
      id: string;
      user: string;
      isAdmin: boolean;
      token: string;
      leaseMs: number;
      waits: boolean;
      others: boolean;
    }): Promise<ReentrantHeld | ReentrantBusy | Refused> {
      const s = a.shard;
      const reply = await acquireLeaseScript(
        redis,
        [s.lease(a.id), s.leaseFences, s.doc(a.id)],
        [a.user, a.isAdmin ? 1 : 0, a.token, a.leaseMs, a.waits ? 1 : 0, a.others ? 1 : 0],
      );
      return typeof reply === 'number' ? refused(reply) : reentrantAcquired(reply, a.user);
    },

    /**
     * Gives the editing lease `token` of document `id` `leaseMs` from now: its fencing token and depth. LEASED: the
     * token is not the live lease's; NOT_OWNER: another user's; NOT_FOUND: no such document.
     */
    async renewLease(a: {
      shard: Shard;
      id: string;
      user: string;
      token: string;
      leaseMs: number;
    }): Promise<{ fence: string; depth: number } | Refused> {
      const s = a.shard;
      const reply = await renewLeaseScript(redis, [s.lease(a.id), s.doc(a.id)], [a.user, a.token, a.leaseMs]);
      return typeof reply === 'number' ? refused(reply) : { fence: String(reply[0]), depth: reply[1] };
    },

    /**
     * Leaves the editing lease `token` of document `id` once: the depth left (0: free, its doorbell rung if someone
     * waits). Refusals as renewLease.
     */
    async releaseLease(a: { shard: Shard; id: string; user: string; token: string }): Promise<number | Refused> {
      const s = a.shard;
      const reply = await releaseLeaseScript(redis, [s.lease(a.id), s.doc(a.id)], [a.user, a.token, s.leaseBell(a.id)]);
      return reply < 0 ? refused(reply) : reply;
    },

    /** `user` votes for document `id` (once); its votes. */
    async voteDocument({ shard: s, id, user }: { shard: Shard; id: string; user: string }): Promise<number | Refused> {
      const votes = await voteDocumentScript(
        redis,
        [s.doc(id), s.voters(id), s.votes, s.version, s.liveSeq, s.liveLog],
        [id, user, s.bell(id), s.liveBell],
      );
      return votes < 0 ? refused(votes) : votes;
    },

    /** Documents `ids` of one shard (null where none), with their content when `content`: one script call. */
    async readDocuments(a: {
      shard: Shard;
      ids: readonly string[];
      viewer: string | null;
      content: boolean;
    }): Promise<(StoredDocument | null)[]> {
      const s = a.shard;
      const reply = await readDocumentsScript(
        redis,
        [...a.ids.map(s.doc), ...(a.viewer ? a.ids.map(s.voters) : [])],
        [a.content ? 1 : 0, a.viewer ?? ''],
      );
      return reply.map((d) => {
        if (!d) return null;
        const [title, author, updated, votes, content, voted] = d;
        return {
          title,
          ...(a.content ? { content: content ?? '' } : {}),
          author: author ?? '',
          updatedMs: Number(updated),
          votes: Number(votes),
          viewerVoted: voted === 1,
        };
      });
    },

    /** The shard's words starting with each prefix (at most `scanMax` each) with their document frequencies. */
    async expandPrefixes(a: {
      shard: Shard;
      prefixes: readonly string[];
      scanMax: number;
    }): Promise<[string, number][][]> {
      const reply = await expandPrefixesScript(redis, [a.shard.vocabulary, a.shard.df], [a.scanMax, ...a.prefixes]);
      return reply.map((flat) => {
        const out: [string, number][] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) out.push([String(flat[i]), Number(flat[i + 1])]);
        return out;
      });
    },

    /** The shard's documents, the sum of their lengths, and per group the documents having any of its words. */
    async searchStats(a: {
      shard: Shard;
      groups: readonly (readonly string[])[];
    }): Promise<{ documents: number; lengthSum: number; version: string; df: number[] }> {
      const s = a.shard;
      const words = a.groups.flat();
      const [documents, lengthSum, version, ...df] = await searchStatsScript(
        redis,
        [s.updated, s.lengthSum, s.df, s.version, s.statsScratch, ...words.map(s.word)],
        [JSON.stringify(a.groups)],
      );
      return {
        documents: documents as number,
        lengthSum: lengthSum as number,
        version: String(version),
        df: df as number[],
      };
    },

    /**
     * Runs one shard's part of search `resultId`; its number of matches and its first `top` entries. With `checked`,
     * refused with CHANGED (and the shard's version) when the shard is not at `matches.version`. Deletes the matches
     * `drop` first (those results the user's new one evicted made in this shard).
     */
    async searchDocuments(a: {
      shard: Shard;
      resultId: string;
      matches: Matches;
      checked: boolean;
      order: ShardOrder;
      ttlSeconds: number;
      resultMax: number;
      top: number;
      /** then 'bm25': BM25's parameters and the average document length over every shard. */
      bm25: { k1: number; b: number; avgLength: number };
      groups: readonly { words: readonly string[]; idf: number }[];
      exclude: readonly string[];
      drop: readonly Matches[];
    }): Promise<{ total: number; top: Entry[]; made: boolean } | (Refused & { version: string })> {
      const s = a.shard;
      const m = s.matches(a.matches.query, a.matches.version);
      const { weights, then } = a.order;
      const reply = await searchDocumentsScript(
        redis,
        [
          m.hits,
          m.total,
          s.updated,
          s.votes,
          s.titleScores,
          s.titles,
          s.lengths,
          s.scratch(a.resultId, 0),
          s.version,
          ...a.groups.map((_g, i) => s.scratch(a.resultId, i + 1)),
          ...a.groups.flatMap((g) => g.words.map(s.word)),
          ...a.exclude.map(s.word),
          ...a.drop.flatMap((d) => {
            const dropped = s.matches(d.query, d.version);
            return [dropped.hits, dropped.total];
          }),
        ],
        [
          JSON.stringify({
            args: [
              String(a.ttlSeconds),
              String(a.resultMax),
              String(a.top),
              String(weights.updated ?? ''),
              String(weights.votes ?? ''),
              String(weights.titleScore ?? ''),
              typeof then === 'object' ? then.position : (then ?? ''),
              typeof then === 'object' && then.descending ? '1' : '0',
              String(a.bm25.avgLength),
              String(a.bm25.k1),
              String(a.bm25.b),
            ],
            sizes: a.groups.map((g) => g.words.length),
            idf: a.groups.map((g) => g.idf),
            drops: a.drop.length,
          }),
          a.checked ? a.matches.version : '',
        ],
      );
      if (typeof reply[1] === 'string') return { ...refused(reply[0]), version: reply[1] };
      const [total, top, made] = reply as [number, string[], 0 | 1];
      return { total, top: pairs(top), made: made === 1 };
    },

    /** The first `top` entries of a shard's result set, renewing its TTL; null when it expired. */
    async readHits(a: { shard: Shard; matches: Matches; ttlSeconds: number; top: number }): Promise<Entry[] | null> {
      const m = a.shard.matches(a.matches.query, a.matches.version);
      const hits = await readHitsScript(redis, [m.hits, m.total], [a.ttlSeconds, a.top]);
      return hits && pairs(hits);
    },

    /** Lower-cased titles of documents `ids` of one shard (what title sorts merge shards by). */
    async readTitles({ shard, ids }: { shard: Shard; ids: readonly string[] }): Promise<string[]> {
      if (ids.length === 0) return [];
      return (await redis.hmget(shard.titles, ...ids)).map((t) => t ?? '');
    },

    /**
     * A search of `user` starts: takes one of `limit` places among their searches at once (null: all taken, nothing
     * changed); then reads the live result `pinned` when it answers `fingerprint` (its description, and `merged`
     * entries of its merged copy: null when there is none), renewing it; otherwise notes `resultId` among the
     * user's live results, and returns those evicted past `max` with their descriptions (null: none was kept).
     */
    async beginSearch(a: {
      user: string;
      limit: number;
      holdMs: number;
      holder: string;
      ttlSeconds: number;
      max: number;
      resultId: string;
      pinned: { resultId: string; fingerprint: string; merged?: { offset: number; count: number } } | null;
    }): Promise<
      | { pinned: { description: ResultDescription; merged: Entry[] | null } }
      | { evicted: { resultId: string; description: ResultDescription | null }[] }
      | null
    > {
      const u = keys.searcher(a.user);
      const reply = await beginSearchScript(
        redis,
        [u.searching, u.results, u.descriptions, u.merged(a.pinned?.resultId ?? a.resultId)],
        [
          a.limit,
          a.holdMs,
          a.holder,
          a.ttlSeconds * 1000,
          a.max,
          a.resultId,
          a.pinned?.resultId ?? '',
          a.pinned?.fingerprint ?? '',
          a.pinned?.merged?.offset ?? 0,
          a.pinned?.merged?.count ?? 0,
        ],
      );
      if (reply === 0) return null;
      const [, description, merged, evicted] = reply;
      if (description)
        return {
          pinned: {
            description: JSON.parse(description) as ResultDescription,
            merged:
              merged &&
              merged.map((e) => {
                const space = e.indexOf(' ');
                return [e.slice(space + 1), Number(e.slice(0, space))];
              }),
          },
        };
      const out: { resultId: string; description: ResultDescription | null }[] = [];
      for (let i = 0; i < evicted.length; i += 2)
        out.push({
          resultId: evicted[i]!,
          description: evicted[i + 1] ? (JSON.parse(evicted[i + 1]!) as ResultDescription) : null,
        });
      return { evicted: out };
    },

    /**
     * A search of `user` ends: gives its place back, deletes the merged copies of the results its begin `evicted`,
     * and keeps the description of its new result `resultId` (`description` null: it made none); false when that
     * result was evicted meanwhile (its description is not kept, and its merged copy is deleted).
     */
    async endSearch(a: {
      user: string;
      holder: string;
      resultId: string;
      description: ResultDescription | null;
      ttlSeconds: number;
      evicted: readonly string[];
    }): Promise<boolean> {
      const u = keys.searcher(a.user);
      const kept = await endSearchScript(
        redis,
        [u.searching, u.results, u.descriptions, u.merged(a.resultId), ...a.evicted.map(u.merged)],
        [
          a.holder,
          a.description ? a.resultId : '',
          a.description ? JSON.stringify(a.description) : '',
          a.ttlSeconds * 1000,
        ],
      );
      return kept === 1;
    },

    /** Stores the merged order of every shard's matches ("<score> <id>" each) of a user's result, for deep pages. */
    async saveMerged(a: {
      user: string;
      resultId: string;
      ttlSeconds: number;
      entries: readonly Entry[];
    }): Promise<void> {
      const merged = keys.searcher(a.user).merged(a.resultId);
      const multi = redis.multi().del(merged);
      for (let i = 0; i < a.entries.length; i += 1000)
        multi.rpush(merged, ...a.entries.slice(i, i + 1000).map(([id, score]) => `${score} ${id}`));
      await multi.expire(merged, a.ttlSeconds).exec();
    },

    /**
     * Counts searches of one `minute` and `hour` (the dashboard's search panel): searches per "<kind> <second>", and
     * per query (with the documents its last search found) among the hour's busiest, at most `kept`.
     */
    async countSearches(a: {
      minute: number;
      hour: number;
      rates: readonly [field: string, searches: number][];
      queries: readonly [query: string, searches: number, found: number][];
      kept: number;
      rateTtlSeconds: number;
      hourTtlSeconds: number;
    }): Promise<void> {
      const { activity } = keys;
      await countSearchesScript(
        redis,
        [activity.rate(a.minute), activity.queries(a.hour), activity.results(a.hour)],
        [a.kept, a.rateTtlSeconds, a.hourTtlSeconds, JSON.stringify({ rates: a.rates, queries: a.queries })],
      );
    },

    /** The searches per kind and second of `minute` ("<kind> <second>" → searches). */
    async searchRates({ minute }: { minute: number }): Promise<Record<string, string>> {
      return redis.hgetall(keys.activity.rate(minute));
    },

    /** The `first` busiest queries of `hour`, each with its searches and the documents its last search found. */
    async busiestQueries(a: {
      hour: number;
      first: number;
    }): Promise<{ query: string; searches: number; found: number }[]> {
      const { activity } = keys;
      if (a.first === 0) return [];
      const top = pairs(await redis.zrevrange(activity.queries(a.hour), 0, a.first - 1, 'WITHSCORES'));
      if (top.length === 0) return [];
      const found = await redis.hmget(activity.results(a.hour), ...top.map(([query]) => query));
      return top.map(([query, searches], i) => ({ query, searches, found: Number(found[i] ?? 0) }));
    },

    /** How many documents one shard holds. */
    async documentCount({ shard }: { shard: Shard }): Promise<number> {
      return redis.zcard(shard.updated);
    },

    /** Deletes a query's matches in one shard (those an evicted result made). */
    async deleteMatches(a: { shard: Shard; matches: Matches }): Promise<void> {
      const m = a.shard.matches(a.matches.query, a.matches.version);
      await redis.del(m.hits, m.total);
    },
  };
}
