/**
 * searchDocuments: the book's parse_and_search / search_and_sort / search_and_zsort over a sharded index. Every
 * shard runs the query at once (one script each) and keeps its matches, in the sort's order, in a result set
 * that lives SEARCH_RESULT_TTL seconds after its last use; the gateway merges the shards' first entries. Pages
 * asked with a `resultId` come from those sets, so they do not move under concurrent writes. A deep page (ending
 * past DEEP_FROM) reads a merged copy of every shard's order, made once per result, so it costs what page 1
 * costs. RELEVANCE is BM25 with each group's document frequency summed over every shard. Searches of the same
 * query that find a shard unchanged share its matches there, whoever asks, from any process: the shard makes them
 * once (docs/search.md, "Shared matches").
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, badInput } from '../../errors.js';
import type { DocumentCommands, Entry, Matches, ResultDescription, Shard } from '../../redis/documents/commands.js';
import { checkPage, type Page } from '../shared/paging.js';
import type { SearchActivity } from './activity.js';
import { parseQuery, type ParsedQuery, type Term } from './query.js';
import type { Shards } from '../shared/shards.js';
import {
  DEFAULT_RANK_WEIGHTS,
  DOCUMENT_SORTS,
  RANK_WEIGHT_MAX,
  shardOrder,
  sortOf,
  weighted,
  type DocumentSort,
  type RankWeights,
} from './sorts.js';

export const SEARCH_PAGE: Page = { default: 10, max: 100 };
/** Results skipped before the page. */
export const DEFAULT_OFFSET = 0;

export interface SearchArgs {
  query: string;
  sort: DocumentSort;
  /** RANKED only; DEFAULT_RANK_WEIGHTS when null. */
  weights?: RankWeights | null;
  first: number;
  offset: number;
  resultId?: string | null;
  /** Whether the search counts in `searchActivity` (false: live search's own evaluations). Default true. */
  counted?: boolean;
}

/** One result: the document's id and its score under the sort (a position for the title and id sorts). */
export interface SearchHit {
  id: string;
  score: number;
}

export interface DocumentSearch {
  resultId: string;
  totalCount: number;
  hits: SearchHit[];
  /** The query's words after prefix expansion (what matchedTerms picks from). */
  terms: string[];
}

/** Pages ending within the first DEEP_FROM results merge the shards' first entries; deeper ones the merged copy. */
export const DEEP_FROM = 100;
/** Matching words of one prefix each shard considers (then the SEARCH_PREFIX_MAX most frequent are kept). */
export const PREFIX_SCAN = 10_000;
/** RELEVANCE's BM25 parameters. */
export const BM25 = { k1: 1.2, b: 0.75 } as const;
/** BM25's idf per group and the average document length, over every shard. */
export interface Bm25Stats {
  idf: number[];
  avgLength: number;
}
/** A search holds its semaphore place at most this long (a process that died frees it then). */
const HOLD_MS = 30_000;
const RESULT_ID = /^[A-Za-z0-9_-]{22}$/;

/** The SEARCH_* settings a search reads. */
export interface SearchOptions {
  prefixMax: number;
  resultTtlSeconds: number;
  resultMax: number;
  resultsPerUser: number;
  concurrency: number;
}

export interface SearchServiceDeps {
  commands: DocumentCommands;
  shards: Shards<Shard>;
  options: SearchOptions;
  log: Logger;
  /** Where the searches that ran are counted. */
  activity?: SearchActivity;
}

export class SearchService {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards<Shard>;
  private readonly options: SearchOptions;
  private readonly log: Logger;
  private readonly activity: SearchActivity | undefined;
  /** Each shard's version as this process last saw it: what a search by a sort other than RELEVANCE names first. */
  private readonly versions: string[] = [];

  constructor(deps: SearchServiceDeps) {
    ({ commands: this.commands, shards: this.shards, options: this.options, log: this.log } = deps);
    this.activity = deps.activity;
  }

  async searchDocuments(user: string, args: SearchArgs): Promise<DocumentSearch> {
    checkPage('first', args.first, SEARCH_PAGE.max);
    if (!Number.isInteger(args.offset) || args.offset < 0 || args.offset > this.options.resultMax)
      throw badInput('offset', `must be between 0 and ${this.options.resultMax}`);
    if (!DOCUMENT_SORTS.includes(args.sort)) throw badInput('sort', `must be one of ${DOCUMENT_SORTS.join(', ')}`);
    const query = parseQuery(args.query);
    const weights = weighted(args.sort) ? rankWeights(args.weights) : null;
    const fingerprint = JSON.stringify([query, args.sort, weights]);
    await this.shards.ready();
    const page = { sort: args.sort, offset: args.offset, first: args.first };
    const deep = page.offset + page.first > DEEP_FROM;
    const pinned = args.resultId && RESULT_ID.test(args.resultId) ? args.resultId : null;
    const search: Search = {
      user,
      holder: randomBytes(12).toString('base64url'),
      resultId: newResultId(),
      evicted: [],
      dropped: false,
    };
    // One step on the user's slot takes a place among their searches and finds the pinned result, or notes the new
    // one. A new search's light reads (prefix expansion, relevance statistics or the shards' versions) run beside
    // it; the searches proper only once the place is taken.
    const [begun, planned] = await Promise.allSettled([
      this.begin(
        search,
        pinned
          ? { resultId: pinned, fingerprint, ...(deep && { merged: { offset: page.offset, count: page.first } }) }
          : null,
      ),
      pinned ? null : this.plan(query, page),
    ]);
    if (begun.status === 'rejected') throw begun.reason;
    const started = begun.value;
    if (!started)
      throw new AppError('BUSY', `at most ${this.options.concurrency} searches of one user run at once; try again`);
    let made: ResultDescription | null = null;
    try {
      if ('pinned' in started && pinned) {
        const { description, merged } = started.pinned;
        const hits = await this.pinnedPage({ user, resultId: pinned, meta: description, merged, page });
        if (hits) return { resultId: pinned, totalCount: sum(description.counts), hits, terms: description.terms };
        // its shards' sets expired: searched again, as a new result (the place is this search's already)
        await this.begin(search, null);
      }
      if (planned.status === 'rejected') throw planned.reason;
      const plan = planned.value ?? (await this.plan(query, page));
      const found = await this.search(search, { plan, weights, fingerprint, page });
      made = found.description;
      if (args.counted !== false)
        this.activity?.count({
          query: args.query,
          parsed: query,
          sort: args.sort,
          found: found.result.totalCount,
        });
      return found.result;
    } finally {
      // not waited for: later commands of this process on the user's slot (and shards) are sent after these
      const description = made;
      const { resultId, evicted } = search;
      this.commands
        .endSearch({
          user,
          holder: search.holder,
          resultId,
          description,
          ttlSeconds: this.ttl,
          evicted: evicted.map((e) => e.resultId),
        })
        .then((kept) => {
          // evicted meanwhile: its merged copy is gone with the end, the matches it made go now
          if (description && !kept) this.dropMatches([{ resultId, description }]);
        })
        .catch(this.warn('end'));
      if (!search.dropped) this.dropMatches(evicted);
    }
  }

  /**
   * Takes the search's place (refreshed when it has one) and reads the pinned result, or notes the new one: null when
   * every place is taken. The results this evicts are the search's to delete (evicted), so that one user's searches
   * keep few sets alive however fast they search: the matches they made by the shards' scripts of this search,
   * their merged copies at its end. (Another user's result showing those matches then finds them gone, and searches
   * again, as when they expire.)
   */
  private async begin(search: Search, pinned: Pinned | null) {
    const started = await this.commands.beginSearch({
      ...search,
      limit: this.options.concurrency,
      holdMs: HOLD_MS,
      ttlSeconds: this.ttl,
      max: this.options.resultsPerUser,
      pinned,
    });
    if (started && 'evicted' in started) search.evicted.push(...started.evicted);
    return started;
  }

  /** What a new search needs first: the query's words after prefix expansion and, for RELEVANCE, idf. */
  private async plan(query: ParsedQuery, page: Asked): Promise<Plan> {
    // RELEVANCE's statistics come with the shards' versions; other sorts take the versions this process saw last,
    // which each shard's script checks (docs/search.md, "Shared matches")
    const bm25 = sortOf(page.sort).then === 'bm25';
    const expanded = await this.expand([...query.groups.flat(), ...query.exclude]);
    const words = (terms: Term[]) => [...new Set(terms.flatMap((t) => expanded(t)))];
    const groups = query.groups.map(words);
    const plan = { groups, exclude: words(query.exclude), terms: [...new Set(groups.flat())] };
    const matchable = groups.every((g) => g.length > 0);
    if (!bm25 || !matchable)
      return { ...plan, matchable, ...NO_STATS, versions: this.shards.all.map((_s, i) => this.versions[i] ?? '0') };
    return { ...plan, matchable, checked: false, ...(await this.bm25Stats(groups)) };
  }

  /** Runs a planned query in every shard; the new result's page and its description. */
  private async search(
    search: Search,
    {
      plan,
      weights,
      fingerprint,
      page,
    }: {
      plan: Plan;
      weights: RankWeights | null;
      fingerprint: string;
      page: Asked;
    },
  ): Promise<{ result: DocumentSearch; description: ResultDescription }> {
    const { user, resultId } = search;
    const end = page.offset + page.first;
    const order = shardOrder(page.sort, weights);
    const bm25 = { ...BM25, avgLength: plan.avgLength };
    const groups = plan.groups.map((words, g) => ({ words, idf: plan.idf[g] ?? 0 }));
    // everything that decides a shard's matches but the shard itself (its version says that)
    const query = createHash('sha256')
      .update(JSON.stringify([order, bm25, groups, plan.exclude, this.options.resultMax]))
      .digest('base64url')
      .slice(0, 22);
    const versions = [...plan.versions];
    // A shard found at another version than the one named returns it; asked again, unchecked, it then names its
    // matches by the version just read, as a search that reads the versions first does (at most two trips).
    const drops = this.shards.all.map((_s, i) =>
      search.evicted.flatMap(({ description: d }) => (d?.made[i] ? [matchesOf(d, i)] : [])),
    );
    const inShard = async (shard: Shard, i: number) => {
      const run = (checked: boolean, drop: readonly Matches[]) =>
        this.commands.searchDocuments({
          shard,
          resultId,
          matches: { query, version: versions[i]! },
          checked,
          order,
          ttlSeconds: this.ttl,
          resultMax: this.options.resultMax,
          top: end <= DEEP_FROM ? end : 0,
          bm25,
          groups,
          exclude: plan.exclude,
          drop,
        });
      const first = await run(plan.checked, drops[i]!);
      if (!('version' in first)) return first;
      versions[i] = this.versions[i] = first.version;
      const again = await run(false, []); // unchecked: never refused
      return again as Exclude<typeof again, { version: string }>;
    };
    let parts: { total: number; top: Entry[]; made: boolean }[];
    if (plan.matchable) {
      parts = await Promise.all(this.shards.all.map(inShard));
      search.dropped = true;
    } else parts = this.shards.all.map(() => ({ total: 0, top: [], made: false }));
    const description: ResultDescription = {
      fingerprint,
      query,
      versions,
      made: parts.map((p) => p.made),
      counts: parts.map((p) => p.total),
      terms: plan.terms,
    };
    const hits =
      end <= DEEP_FROM
        ? await this.shallowPage(
            parts.map((p) => p.top),
            page,
          )
        : ((await this.deepPage({ user, resultId, meta: description, page })) ?? []);
    return {
      result: { resultId, totalCount: sum(description.counts), hits, terms: plan.terms },
      description,
    };
  }

  /**
   * The page of a live pinned result; null when its shards' sets expired. A deep page comes with the description,
   * in one round trip, when the merged copy exists: it costs no more than page 1.
   */
  private async pinnedPage({
    user,
    resultId,
    meta,
    merged,
    page,
  }: {
    user: string;
    resultId: string;
    meta: ResultDescription;
    merged: Entry[] | null;
    page: Asked;
  }): Promise<SearchHit[] | null> {
    const end = page.offset + page.first;
    if (end <= DEEP_FROM) {
      const lists = await this.readShards(meta, end);
      return lists && (await this.shallowPage(lists, page));
    }
    if (!merged) return this.deepPage({ user, resultId, meta, page });
    // the shards' sets are renewed with the copy, for the pages to come
    void this.readShards(meta, 0).catch(this.warn('renew'));
    return scored(page, merged);
  }

  /** A page past DEEP_FROM, making the merged copy of the shards' orders; null when the result expired. */
  private async deepPage({
    user,
    resultId,
    meta,
    page,
  }: {
    user: string;
    resultId: string;
    meta: ResultDescription;
    page: Asked;
  }): Promise<SearchHit[] | null> {
    const lists = await this.readShards(meta, this.options.resultMax);
    if (!lists) return null;
    const merged = (await this.merge(page.sort, lists)).slice(0, this.options.resultMax);
    await this.commands.saveMerged({ user, resultId, ttlSeconds: this.ttl, entries: merged });
    return scored(page, merged.slice(page.offset, page.offset + page.first));
  }

  /** Deletes the matches `evicted` results made, in each shard, without waiting. */
  private dropMatches(evicted: readonly Evicted[]): void {
    for (const { description } of evicted)
      this.shards.all.forEach((shard, i) => {
        if (description?.made[i])
          this.commands.deleteMatches({ shard, matches: matchesOf(description, i) }).catch(this.warn('evict'));
      });
  }

  private warn(what: string) {
    return (err: unknown) => this.log.warn({ err }, `search: ${what}`);
  }

  private get ttl(): number {
    return this.options.resultTtlSeconds;
  }

  /** Every shard's first `top` entries of a result, renewing their TTL; null when one has expired. */
  private async readShards(meta: ResultDescription, top: number): Promise<Entry[][] | null> {
    const ttlSeconds = this.ttl;
    const lists = await Promise.all(
      this.shards.all.map(async (shard, i) =>
        meta.counts[i] ? this.commands.readHits({ shard, matches: matchesOf(meta, i), ttlSeconds, top }) : [],
      ),
    );
    return lists.some((l) => l === null) ? null : (lists as Entry[][]);
  }

  /** A page within the first DEEP_FROM results, from the shards' first entries. */
  private async shallowPage(lists: Entry[][], page: Asked): Promise<SearchHit[]> {
    return scored(page, (await this.merge(page.sort, lists)).slice(page.offset, page.offset + page.first));
  }

  /** Every shard's entries in one order: the sort's, ties by id (title sorts compare the lower-cased titles). */
  private async merge(sort: DocumentSort, lists: Entry[][]): Promise<Entry[]> {
    const all = lists.flat();
    const { then } = sortOf(sort);
    if (typeof then !== 'object') return all.sort(([a, x], [b, y]) => x - y || byId(a, b));
    // positions stand for the order of titles or of ids, which compare across shards
    const direction = then.descending ? -1 : 1;
    if (then.position === 'id') return all.sort(([a], [b]) => direction * byId(a, b));
    const titles = new Map<string, Buffer>();
    await Promise.all(
      lists.map(async (list, i) => {
        const ids = list.map(([id]) => id);
        const found = await this.commands.readTitles({ shard: this.shards.all[i]!, ids });
        ids.forEach((id, j) => titles.set(id, Buffer.from(found[j]!)));
      }),
    );
    return all.sort(([a], [b]) => direction * Buffer.compare(titles.get(a)!, titles.get(b)!) || byId(a, b));
  }

  /** Each prefix term's words: the SEARCH_PREFIX_MAX most frequent over every shard, ties in word order. */
  private async expand(terms: Term[]): Promise<(t: Term) => string[]> {
    const prefixes = [...new Set(terms.filter((t) => t.prefix).map((t) => t.word))];
    const found = new Map<string, string[]>();
    if (prefixes.length > 0) {
      const replies = await Promise.all(
        this.shards.all.map((shard) => this.commands.expandPrefixes({ shard, prefixes, scanMax: PREFIX_SCAN })),
      );
      prefixes.forEach((prefix, i) => {
        const df = new Map<string, number>();
        for (const reply of replies) for (const [w, n] of reply[i]!) df.set(w, (df.get(w) ?? 0) + n);
        const words = [...df].sort(([a, x], [b, y]) => y - x || byId(a, b)).slice(0, this.options.prefixMax);
        found.set(
          prefix,
          words.map(([w]) => w),
        );
      });
    }
    return (t) => (t.prefix ? found.get(t.word)! : [t.word]);
  }

  /** BM25's idf per group and the average document length, over every shard; and each shard's version. */
  async bm25Stats(groups: string[][]): Promise<Bm25Stats & { versions: string[] }> {
    const parts = await Promise.all(this.shards.all.map((shard) => this.commands.searchStats({ shard, groups })));
    const documents = sum(parts.map((p) => p.documents));
    const lengthSum = sum(parts.map((p) => p.lengthSum));
    return {
      idf: groups.map((_g, i) => {
        const df = sum(parts.map((p) => p.df[i]!));
        return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
      }),
      avgLength: documents > 0 ? lengthSum / documents : 1,
      versions: parts.map((p, i) => (this.versions[i] = p.version)),
    };
  }
}

/** A result evicted past SEARCH_RESULTS_PER_USER, with its description (null: none was kept). */
interface Evicted {
  resultId: string;
  description: ResultDescription | null;
}

/**
 * One search of a user: its place among the user's searches, the id of the result it makes, the results its begin
 * evicted, and whether its shards' scripts deleted the matches those made.
 */
interface Search {
  user: string;
  holder: string;
  resultId: string;
  evicted: Evicted[];
  dropped: boolean;
}

/** The live result a search names, the query it must answer, and the page of its merged copy to read. */
interface Pinned {
  resultId: string;
  fingerprint: string;
  merged?: { offset: number; count: number };
}

const newResultId = () => randomBytes(16).toString('base64url');

/** The page a search asks for. */
interface Asked {
  sort: DocumentSort;
  offset: number;
  first: number;
}

/** The relevance statistics of a search by another sort (unused); its shards check the versions it names. */
const NO_STATS = { idf: [] as number[], avgLength: 1, checked: true };

/**
 * A new search's words, statistics and the version of each shard it found; `matchable` is false when a prefix
 * expanded to no word.
 */
interface Plan {
  versions: string[];
  /** Whether each shard checks it is at `versions` (those this process saw last), rather than just read. */
  checked: boolean;
  groups: string[][];
  exclude: string[];
  terms: string[];
  matchable: boolean;
  idf: number[];
  avgLength: number;
}
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const matchesOf = (meta: ResultDescription, shard: number): Matches => ({
  query: meta.query,
  version: meta.versions[shard]!,
});
/** Ids in the order every sort breaks its ties by (as strings, ascending). */
export const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function rankWeights(w: RankWeights | null | undefined): RankWeights {
  const { updated, votes } = w ?? DEFAULT_RANK_WEIGHTS;
  const weights = { updated, votes };
  for (const [name, value] of Object.entries(weights))
    if (!Number.isFinite(value) || Math.abs(value) > RANK_WEIGHT_MAX)
      throw badInput(`weights.${name}`, `must be a number from -${RANK_WEIGHT_MAX} to ${RANK_WEIGHT_MAX}`);
  return weights;
}

/** A page's hits with the score of the sort: updatedAt in seconds, votes, the weighted sum, BM25, or a position. */
function scored(page: Asked, entries: readonly Entry[]): SearchHit[] {
  const { score } = sortOf(page.sort);
  return score === 'position'
    ? entries.map(([id], i) => ({ id, score: page.offset + i + 1 }))
    : entries.map(([id, stored]) => ({ id, score: score(stored) }));
}
