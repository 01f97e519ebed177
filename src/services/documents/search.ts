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
import type { DocumentCommands, Entry, Matches, ResultDescription } from '../../redis/documents/commands.js';
import type { SemaphoreService } from '../coordination/semaphores.js';
import { checkPage, type Page } from '../shared/paging.js';
import { parseQuery, type ParsedQuery, type Term } from './query.js';
import type { Shards } from './shards.js';
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
  shards: Shards;
  semaphores: SemaphoreService;
  options: SearchOptions;
  log: Logger;
}

export class SearchService {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards;
  private readonly semaphores: SemaphoreService;
  private readonly options: SearchOptions;
  private readonly log: Logger;

  constructor(deps: SearchServiceDeps) {
    ({
      commands: this.commands,
      shards: this.shards,
      semaphores: this.semaphores,
      options: this.options,
      log: this.log,
    } = deps);
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
    // The semaphore guards the searches proper; finding an earlier result and the light reads a new search
    // needs first (prefix expansion, relevance statistics) run while it is asked.
    const name = `search:${user}`;
    const [acquired, found] = await Promise.allSettled([
      this.semaphores.acquire({ name, limit: this.options.concurrency, timeoutMs: HOLD_MS }),
      (async () =>
        (args.resultId ? await this.reuse({ user, resultId: args.resultId, fingerprint, page }) : null) ??
        this.plan(query, page))(),
    ]);
    const holder = acquired.status === 'fulfilled' ? acquired.value : null;
    try {
      if (acquired.status === 'rejected') throw acquired.reason;
      if (!holder)
        throw new AppError('BUSY', `at most ${this.options.concurrency} searches of one user run at once; try again`);
      if (found.status === 'rejected') throw found.reason;
      const ready = found.value;
      return 'resultId' in ready ? ready : await this.search({ user, plan: ready, weights, fingerprint, page });
    } finally {
      // not waited for: the next command from this process on the same key is sent after it
      if (holder)
        this.semaphores.release({ name, holder }).catch((err: unknown) => this.log.warn({ err }, 'search: release'));
    }
  }

  /** What a new search needs first: the query's words after prefix expansion and, for RELEVANCE, idf. */
  private async plan(query: ParsedQuery, page: Asked): Promise<Plan> {
    // the shards' versions come with RELEVANCE's statistics, and are read beside the prefixes' expansion otherwise
    const bm25 = sortOf(page.sort).then === 'bm25';
    const [expanded, versions] = await Promise.all([
      this.expand([...query.groups.flat(), ...query.exclude]),
      bm25 ? null : Promise.all(this.shards.all.map((shard) => this.commands.shardVersion({ shard }))),
    ]);
    const words = (terms: Term[]) => [...new Set(terms.flatMap((t) => expanded(t)))];
    const groups = query.groups.map(words);
    const plan = { groups, exclude: words(query.exclude), terms: [...new Set(groups.flat())] };
    const matchable = groups.every((g) => g.length > 0);
    if (!bm25 || !matchable) return { ...plan, matchable, ...NO_STATS, versions: versions ?? [] };
    return { ...plan, matchable, ...(await this.stats(groups)) };
  }

  /** Runs a planned query in every shard; the new result's page. */
  private async search({
    user,
    plan,
    weights,
    fingerprint,
    page,
  }: {
    user: string;
    plan: Plan;
    weights: RankWeights | null;
    fingerprint: string;
    page: Asked;
  }): Promise<DocumentSearch> {
    const resultId = randomBytes(16).toString('base64url');
    const end = page.offset + page.first;
    const order = shardOrder(page.sort, weights);
    const bm25 = { ...BM25, avgLength: plan.avgLength };
    const groups = plan.groups.map((words, g) => ({ words, idf: plan.idf[g] ?? 0 }));
    // everything that decides a shard's matches but the shard itself (its version says that)
    const query = createHash('sha256')
      .update(JSON.stringify([order, bm25, groups, plan.exclude, this.options.resultMax]))
      .digest('base64url')
      .slice(0, 22);
    const parts = plan.matchable
      ? await Promise.all(
          this.shards.all.map((shard, i) =>
            this.commands.searchDocuments({
              shard,
              resultId,
              matches: { query, version: plan.versions[i]! },
              order,
              ttlSeconds: this.options.resultTtlSeconds,
              resultMax: this.options.resultMax,
              top: end <= DEEP_FROM ? end : 0,
              bm25,
              groups,
              exclude: plan.exclude,
            }),
          ),
        )
      : this.shards.all.map(() => ({ total: 0, top: [], made: false }));
    const description: ResultDescription = {
      fingerprint,
      query,
      versions: plan.versions,
      made: parts.map((p) => p.made),
      counts: parts.map((p) => p.total),
      terms: plan.terms,
    };
    const saved = Promise.all([
      this.commands.saveResult({
        home: this.shards.of(resultId),
        resultId,
        ttlSeconds: this.options.resultTtlSeconds,
        description,
      }),
      this.track({ user, resultId, touch: false }),
    ]);
    const hits =
      end <= DEEP_FROM
        ? await this.shallowPage(
            parts.map((p) => p.top),
            page,
          )
        : ((await this.deepPage(resultId, description, page)) ?? []);
    await saved;
    return { resultId, totalCount: sum(description.counts), hits, terms: plan.terms };
  }

  /**
   * The page of a live result of the same query; null when it expired (or is unknown, or of another query). A deep
   * page comes with the description, in one round trip, when the merged copy exists: it costs no more than page 1.
   */
  private async reuse({
    user,
    resultId,
    fingerprint,
    page,
  }: {
    user: string;
    resultId: string;
    fingerprint: string;
    page: Asked;
  }): Promise<DocumentSearch | null> {
    if (!RESULT_ID.test(resultId)) return null;
    const end = page.offset + page.first;
    const deep = end > DEEP_FROM;
    const stored = await this.commands.readResult({
      home: this.shards.of(resultId),
      resultId,
      ttlSeconds: this.options.resultTtlSeconds,
      ...(deep && { merged: { offset: page.offset, count: page.first } }),
    });
    const meta = stored.description;
    if (meta?.fingerprint !== fingerprint) return null;
    const warn = (what: string) => (err: unknown) => this.log.warn({ err }, `search: ${what}`);
    void this.track({ user, resultId, touch: true }).catch(warn('track'));
    let hits: SearchHit[] | null;
    if (!deep) {
      const lists = await this.readShards(meta, end);
      hits = lists && (await this.shallowPage(lists, page));
    } else if (stored.merged) {
      // the shards' sets are renewed with the copy, for the pages to come
      void this.readShards(meta, 0).catch(warn('renew'));
      hits = scored(page, stored.merged);
    } else hits = await this.deepPage(resultId, meta, page);
    return hits && { resultId, totalCount: sum(meta.counts), hits, terms: meta.terms };
  }

  /** A page past DEEP_FROM, making the merged copy of the shards' orders; null when the result expired. */
  private async deepPage(resultId: string, meta: ResultDescription, page: Asked): Promise<SearchHit[] | null> {
    const lists = await this.readShards(meta, this.options.resultMax);
    if (!lists) return null;
    const merged = (await this.merge(page.sort, lists)).slice(0, this.options.resultMax);
    await this.commands.saveMerged({
      home: this.shards.of(resultId),
      resultId,
      ttlSeconds: this.options.resultTtlSeconds,
      entries: merged,
    });
    return scored(page, merged.slice(page.offset, page.offset + page.first));
  }

  /**
   * Notes a user's new result (or use of one, `touch`) in their list of live results; deletes their least recently
   * used past SEARCH_RESULTS_PER_USER, with the matches they made, so that one user's searches keep few sets alive
   * however fast they search. (Another user's result showing those matches then finds them gone, and searches
   * again, as when they expire.)
   */
  private async track({ user, resultId, touch }: { user: string; resultId: string; touch: boolean }): Promise<void> {
    const evicted = await this.commands.trackResult({
      user,
      resultId,
      max: this.options.resultsPerUser,
      ttlSeconds: this.options.resultTtlSeconds,
      touch,
    });
    await Promise.all(
      evicted.map(async (old) => {
        const home = this.shards.of(old);
        const { description } = await this.commands.readResult({
          home,
          resultId: old,
          ttlSeconds: this.options.resultTtlSeconds,
        });
        await Promise.all(
          this.shards.all.map((shard, i) =>
            this.commands.deleteResult({
              shard,
              resultId: old,
              home: shard === home,
              made: description?.made[i] ? matchesOf(description, i) : null,
            }),
          ),
        );
      }),
    );
  }

  /** Every shard's first `top` entries of a result, renewing their TTL; null when one has expired. */
  private async readShards(meta: ResultDescription, top: number): Promise<Entry[][] | null> {
    const ttlSeconds = this.options.resultTtlSeconds;
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
  private async stats(groups: string[][]): Promise<{ idf: number[]; avgLength: number; versions: string[] }> {
    const parts = await Promise.all(this.shards.all.map((shard) => this.commands.searchStats({ shard, groups })));
    const documents = sum(parts.map((p) => p.documents));
    const lengthSum = sum(parts.map((p) => p.lengthSum));
    return {
      idf: groups.map((_g, i) => {
        const df = sum(parts.map((p) => p.df[i]!));
        return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
      }),
      avgLength: documents > 0 ? lengthSum / documents : 1,
      versions: parts.map((p) => p.version),
    };
  }
}

/** The page a search asks for. */
interface Asked {
  sort: DocumentSort;
  offset: number;
  first: number;
}

/** The relevance statistics of a search by another sort (unused). */
const NO_STATS = { idf: [] as number[], avgLength: 1 };

/**
 * A new search's words, statistics and the version of each shard it found; `matchable` is false when a prefix
 * expanded to no word.
 */
interface Plan {
  versions: string[];
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
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
