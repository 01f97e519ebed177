/**
 * Live search: `searchChanged` follows the top `first` results of a search as documents are indexed, voted on and
 * deleted. A percolator run backwards (docs/search.md "Live search"): every write appends one entry to its shard's
 * change log inside the script that makes it (src/redis/lib/live-search.lua); each process with live queries
 * follows the logs of every shard through its mailbox poller, finds the live queries an entry's words can affect
 * (a word index over the live queries it holds) and tells each subscriber how the top moved, as ENTERED, UPDATED and
 * LEFT with positions. A live query under a sort whose key the entry carries (every sort but RANKED, no prefix term)
 * keeps its top plus a reserve and moves them by the entry alone; it searches again only when the reserve runs dry
 * and, under RELEVANCE (whose idf and average length every write moves), at each reconciliation while writes happen:
 * between them a written document is scored with the statistics of the last search. The others search again (once
 * per distinct live query and step, however many subscribe to it).
 */
import { randomBytes } from 'node:crypto';
import { Repeater } from '@repeaterjs/repeater';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { AppError, badInput } from '../../errors.js';
import type { DocumentCommands, LiveChange, Shard } from '../../redis/documents/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import { checkPage } from '../shared/paging.js';
import type { Shards } from '../shared/shards.js';
import { Stop } from '../shared/stop.js';
import type { DocumentService, DocumentSummary } from './documents.js';
import { parseQuery, type ParsedQuery } from './query.js';
import { BM25, SEARCH_PAGE, byId, type Bm25Stats, type SearchHit, type SearchService } from './search.js';
import { DOCUMENT_SORTS, sortOf, type DocumentSort } from './sorts.js';

/** searchChanged's sort when none is given. */
export const LIVE_SORT_DEFAULT: DocumentSort = 'RELEVANCE';

export const SEARCH_CHANGE_KINDS = ['ENTERED', 'UPDATED', 'LEFT'] as const;
export type SearchChangeKind = (typeof SEARCH_CHANGE_KINDS)[number];

/** One move of a live top: a document entered it, changed or moved within it, or left it. */
export interface SearchChange {
  kind: SearchChangeKind;
  documentId: string;
  /** The document as the viewer sees it (null for LEFT, or when it was deleted before it could be read). */
  document: DocumentSummary | null;
  /** The sort's score, as searchDocuments' hits give it. */
  score: number;
  /** Its 0-based place in the top once this change is applied (null for LEFT). */
  position: number | null;
}

/** Change-log entries read at once. */
const LOG_BATCH = 1000;
/** After a failed read or search (Redis away, the evaluator's searches all busy), wait this long and try again. */
const RETRY_MS = 1000;
/**
 * The documents written since a subscriber last looked, kept by id up to this many; past it (a client that stopped
 * reading while the index kept changing) the subscriber takes every document of its top as written ('all').
 */
const TOUCHED_MAX = 1000;

export interface LiveSearchOptions {
  /** LIVE_QUERIES_PER_SOCKET */
  queriesPerSocket: number;
  /** LIVE_RECONCILE_MS */
  reconcileMs: number;
  /** SEARCH_CONCURRENCY: the searches this process's evaluator runs at once. */
  concurrency: number;
}

export interface LiveSearchDeps {
  commands: DocumentCommands;
  shards: Shards<Shard>;
  search: SearchService;
  documents: DocumentService;
  poller: MailboxPoller;
  options: LiveSearchOptions;
  log: Logger;
}

/** A subscriber's share of its live query's moves: the documents changed since it last looked. */
interface Subscriber {
  /**
   * Ids of documents written since the subscriber's last delivery; 'all' after a gap in a change log, or past
   * TOUCHED_MAX.
   */
  touched: Set<string> | 'all';
  wake(): void;
}

/** A distinct live query of this process, shared by every subscription asking the same. */
interface LiveQuery {
  key: string;
  query: string;
  parsed: ParsedQuery;
  sort: DocumentSort;
  first: number;
  /** The top as last searched; null before the first search. */
  top: SearchHit[] | null;
  /**
   * The documents its subscribers read since that search, by viewer, content and ids: subscriptions of one viewer
   * that are in step read them once.
   */
  reads: Map<string, Promise<(DocumentSummary | null)[]>>;
  /** Documents written since the last search that may have moved in it ('all': unknown, a gap). */
  touched: Set<string> | 'all';
  subscribers: Set<Subscriber>;
  /** Whether writes that do not touch its words may still move it (RELEVANCE's idf, a prefix's expansion). */
  drifts: boolean;
  /** How its sort orders two documents, when a change-log entry tells where a document goes (null: search again). */
  order: Order | null;
  /**
   * With an order: the top and its reserve (the first `first + reserve(first)` matches as last known, in order),
   * every match when `complete`; null before the first search.
   */
  kept: Ranked[] | null;
  complete: boolean;
  /** RELEVANCE: the words of each group, and BM25's statistics as of its last search (null before it). */
  groups: string[][];
  stats: Bm25Stats | null;
  /**
   * With an order, while it is searched again: the entries that affected it since the search began, applied again
   * to the search's answer (an entry is the document's state after it, so applying it twice is harmless).
   */
  inflight: LiveChange[] | null;
}

/** A document as a live query's order compares it: what the change log carries of it after its last change. */
interface Ranked {
  id: string;
  updated: number;
  votes: number;
  title: Buffer;
  /** RELEVANCE's score (BM25). */
  score: number;
}
type Order = (a: Ranked, b: Ranked) => number;

const byRankedId = (a: Ranked, b: Ranked) => byId(a.id, b.id);
/** The sorts a live query follows from the change log alone, as searchDocuments orders them (ties by id). */
const ORDERS: Partial<Record<DocumentSort, Order>> = {
  UPDATED_DESC: (a, b) => b.updated - a.updated || byRankedId(a, b),
  UPDATED_ASC: (a, b) => a.updated - b.updated || byRankedId(a, b),
  VOTES_DESC: (a, b) => b.votes - a.votes || byRankedId(a, b),
  TITLE_ASC: (a, b) => Buffer.compare(a.title, b.title) || byRankedId(a, b),
  TITLE_DESC: (a, b) => Buffer.compare(b.title, a.title) || byRankedId(a, b),
  ID_ASC: byRankedId,
  ID_DESC: (a, b) => byRankedId(b, a),
  RELEVANCE: (a, b) => b.score - a.score || byRankedId(a, b),
};
/** The reserve a live query with an order keeps past its top: as many again, at least 10, within one search page. */
const reserve = (first: number) => Math.min(Math.max(first, 10), SEARCH_PAGE.max - first);

export class LiveSearchService {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards<Shard>;
  private readonly search: SearchService;
  private readonly documents: DocumentService;
  private readonly poller: MailboxPoller;
  private readonly options: LiveSearchOptions;
  private readonly log: Logger;
  /** Who this process's searches run as: no user can have the name (usernames have no ':'). */
  private readonly evaluator = `live:${randomBytes(6).toString('hex')}`;

  private readonly queries = new Map<string, LiveQuery>();
  /** The live queries by each word of their groups; those with a prefix term are checked against every change. */
  private readonly byWord = new Map<string, Set<LiveQuery>>();
  private readonly withPrefix = new Set<LiveQuery>();
  /** searchChanged subscriptions per WebSocket (keyed by the socket's receipt confirmer, one per socket). */
  private readonly perSocket = new WeakMap<object, number>();

  /** Per shard, the last change-log entry read; empty while no live query is held. */
  private cursors: number[] = [];
  private following: Promise<void> | null = null;
  private unwatch: (() => void)[] = [];
  private readonly moved = new Set<number>();
  private readonly dirty = new Set<LiveQuery>();
  /** Entries read since the last reconciliation. */
  private writesSinceReconcile = 0;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** The evaluator's searches: SEARCH_CONCURRENCY at once, the steps' own before reconciliations. */
  private readonly searches: PQueue;

  constructor(deps: LiveSearchDeps) {
    ({
      commands: this.commands,
      shards: this.shards,
      search: this.search,
      documents: this.documents,
      poller: this.poller,
      options: this.options,
      log: this.log,
    } = deps);
    this.searches = new PQueue({ concurrency: this.options.concurrency });
  }

  /**
   * The top `first` results of `query` under `sort` as ENTERED, in order, then every move of that top as
   * `viewer` sees it (documents read only when `document`, with their content when `content`). `socket`: the WebSocket it runs on, which holds
   * at most LIVE_QUERIES_PER_SOCKET (BUSY past it).
   */
  searchChanged(
    viewer: string,
    input: { query: string; sort: DocumentSort; first: number; content: boolean; document: boolean },
    socket?: object,
  ): Repeater<SearchChange> {
    checkPage('first', input.first, SEARCH_PAGE.max);
    if (!DOCUMENT_SORTS.includes(input.sort)) throw badInput('sort', `must be one of ${DOCUMENT_SORTS.join(', ')}`);
    const parsed = parseQuery(input.query);
    return new Repeater<SearchChange>(async (push, stopped) => {
      // Counted once it runs, beside the finally that uncounts it: a subscription ended before it was ever read
      // (subscribed and completed at once) never runs, and so never counts.
      const held = socket ? (this.perSocket.get(socket) ?? 0) : 0;
      if (socket && held >= this.options.queriesPerSocket)
        throw new AppError(
          'BUSY',
          `at most ${this.options.queriesPerSocket} searchChanged subscriptions per connection`,
        );
      if (socket) this.perSocket.set(socket, held + 1);
      let woken = false;
      let wake: (() => void) | undefined;
      const sub: Subscriber = {
        touched: new Set(),
        wake: () => {
          woken = true;
          wake?.();
        },
      };
      const stop = new Stop(stopped, () => wake?.());
      const q = this.register({ ...input, parsed }, sub);
      let delivered: SearchHit[] = [];
      try {
        await this.startFollowing();
        while (!stop.stopped) {
          if (!woken || !q.top) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
            continue;
          }
          woken = false;
          const { top, reads } = q;
          const changes = changesOf(delivered, top, sub.touched, scoreMoves(q.sort));
          sub.touched = new Set();
          if (changes.length === 0) continue;
          const shown = input.document ? changes.filter((c) => c.kind !== 'LEFT').map((c) => c.id) : [];
          const readKey = `${viewer}\n${input.content}\n${shown.join(' ')}`;
          let read = reads.get(readKey);
          if (!read) {
            read =
              shown.length === 0
                ? Promise.resolve([])
                : input.content
                  ? this.documents.documents(viewer, { ids: shown })
                  : this.documents.summaries(viewer, { ids: shown });
            reads.set(readKey, read);
          }
          let docs: (DocumentSummary | null)[];
          try {
            docs = await read;
          } catch (err) {
            reads.delete(readKey);
            this.log.warn({ err }, 'searchChanged read failed; retrying');
            sub.touched = 'all';
            woken = true;
            await stop.delay(RETRY_MS);
            continue;
          }
          const documentOf = new Map(shown.map((id, i) => [id, docs[i] ?? null]));
          for (const c of changes) {
            if (stop.stopped) break;
            await push({
              kind: c.kind,
              documentId: c.id,
              document: documentOf.get(c.id) ?? null,
              score: c.score,
              position: c.position,
            });
          }
          delivered = top;
        }
      } finally {
        this.unregister(q, sub);
        if (socket) this.perSocket.set(socket, (this.perSocket.get(socket) ?? 1) - 1);
      }
    });
  }

  /** The live query `input` asks, held by one more subscriber; searched at once when it is new. */
  private register(
    input: { query: string; parsed: ParsedQuery; sort: DocumentSort; first: number },
    sub: Subscriber,
  ): LiveQuery {
    const key = JSON.stringify([input.parsed, input.sort, input.first]);
    let q = this.queries.get(key);
    if (!q) {
      const { query, parsed, sort, first } = input;
      const prefixed = [...parsed.groups.flat(), ...parsed.exclude].some((t) => t.prefix);
      const order = prefixed ? null : (ORDERS[sort] ?? null);
      const drifts = prefixed || sortOf(sort).then === 'bm25';
      q = {
        key,
        query,
        parsed,
        sort,
        first,
        top: null,
        reads: new Map(),
        touched: new Set(),
        subscribers: new Set(),
        drifts,
        order,
        kept: null,
        complete: false,
        groups: parsed.groups.map((g) => [...new Set(g.map((t) => t.word))]),
        stats: null,
        inflight: null,
      };
      this.queries.set(key, q);
      for (const term of parsed.groups.flat()) {
        if (term.prefix) this.withPrefix.add(q);
        else {
          const set = this.byWord.get(term.word) ?? new Set();
          this.byWord.set(term.word, set.add(q));
        }
      }
      this.dirty.add(q);
      this.schedule();
    }
    q.subscribers.add(sub);
    if (q.top) sub.wake();
    return q;
  }

  private unregister(q: LiveQuery, sub: Subscriber): void {
    q.subscribers.delete(sub);
    if (q.subscribers.size > 0 || this.queries.get(q.key) !== q) return;
    this.queries.delete(q.key);
    this.dirty.delete(q);
    this.withPrefix.delete(q);
    for (const term of q.parsed.groups.flat()) {
      const set = this.byWord.get(term.word);
      set?.delete(q);
      if (set?.size === 0) this.byWord.delete(term.word);
    }
    if (this.queries.size === 0) this.stopFollowing();
  }

  /**
   * Starts following every shard's change log (once, while live queries are held): the cursors are read before
   * the first search, so that a write after them is seen in the log.
   */
  private startFollowing(): Promise<void> {
    this.following ??= (async () => {
      await this.shards.ready();
      const cursors = await Promise.all(this.shards.all.map((shard) => this.commands.liveSeq({ shard })));
      if (this.queries.size === 0) {
        this.following = null;
        return;
      }
      this.cursors = cursors;
      this.unwatch = this.shards.all.map((shard, n) =>
        this.poller.watch(this.commands.liveHead({ shard }), () => {
          this.moved.add(n);
          this.schedule();
        }),
      );
      this.reconcileTimer = setInterval(() => this.reconcile(), this.options.reconcileMs).unref();
      this.schedule();
    })().catch((err: unknown) => {
      this.following = null;
      throw err;
    });
    return this.following;
  }

  private stopFollowing(): void {
    for (const unwatch of this.unwatch) unwatch();
    this.unwatch = [];
    this.cursors = [];
    this.moved.clear();
    clearInterval(this.reconcileTimer);
    this.following = null;
  }

  /**
   * Writes happened since the last reconciliation: the live queries that drift are searched again. Those with an
   * order are searched behind the steps' searches, without holding up the steps (their tops keep moving by the
   * entries meanwhile); the others in the next step.
   */
  private reconcile(): void {
    if (this.writesSinceReconcile === 0) return;
    this.writesSinceReconcile = 0;
    for (const q of this.queries.values())
      if (q.drifts && q.order && q.kept) {
        if (!q.inflight) void this.queued(() => this.evaluate(q), false);
      } else if (q.drifts) this.dirty.add(q);
    this.schedule();
  }

  /** Runs `job` in one of the evaluator's SEARCH_CONCURRENCY places, once one is free (`urgent`: before the others). */
  private queued(job: () => Promise<void>, urgent: boolean): Promise<void> {
    return this.searches.add(job, { priority: urgent ? 1 : 0 });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.running = this.running.then(() => this.step());
    });
  }

  /**
   * Reads the logs that moved, tells the subscribers of the live queries they moved, then searches again those they
   * (or a reconciliation) marked.
   */
  private async step(): Promise<void> {
    if (this.cursors.length === 0) return;
    try {
      const changed = new Set<LiveQuery>();
      // the shards' logs at once: their entries are of different documents, so their order across shards is free
      const moved = [...this.moved];
      this.moved.clear();
      await Promise.all(moved.map((n) => this.readLog(n, changed)));
      for (const q of changed) if (!this.dirty.has(q)) this.moveTop(q);
      const dirty = [...this.dirty];
      this.dirty.clear();
      // SEARCH_CONCURRENCY searches at once, before any reconciliation's
      await Promise.all(dirty.map((q) => this.queued(() => this.evaluate(q), true)));
    } catch (err) {
      this.log.warn({ err }, 'live search step failed; retrying');
      setTimeout(() => this.schedule(), RETRY_MS).unref();
    }
  }

  /**
   * Reads shard `n`'s change log past its cursor: the live queries each entry can affect move by it (`changed`) or
   * are marked to search again.
   */
  private async readLog(n: number, changed: Set<LiveQuery>): Promise<void> {
    const shard = this.shards.all[n]!;
    for (;;) {
      const after = this.cursors[n];
      if (after === undefined) return; // stopped following meanwhile
      const read = await this.commands.readLiveLog({ shard, after, count: LOG_BATCH }).catch((err: unknown) => {
        this.moved.add(n); // read again on the retry
        throw err;
      });
      if (read.gap) for (const q of this.queries.values()) this.mark(q, null);
      for (const entry of read.entries) {
        for (const q of this.affected(entry)) {
          q.inflight?.push(entry);
          if (q.kept && !this.dirty.has(q) && this.apply(q, entry)) {
            changed.add(q);
            if (q.touched !== 'all') q.touched.add(entry.id);
          } else this.mark(q, entry.id);
        }
        this.cursors[n] = entry.seq;
      }
      this.writesSinceReconcile += read.entries.length;
      if (read.gap && read.entries.length === 0) this.cursors[n] = await this.commands.liveSeq({ shard });
      if (read.entries.length < LOG_BATCH) return;
    }
  }

  /** The live queries a change can move: those each of whose groups has a word of the document (before or after). */
  private affected(entry: LiveChange): LiveQuery[] {
    const words = new Set([...entry.words, ...entry.dropped]);
    const candidates = new Set(this.withPrefix);
    for (const word of words) for (const q of this.byWord.get(word) ?? []) candidates.add(q);
    return [...candidates].filter((q) =>
      q.parsed.groups.every((group) =>
        group.some((t) => (t.prefix ? [...words].some((w) => w.startsWith(t.word)) : words.has(t.word))),
      ),
    );
  }

  /**
   * Moves `q`'s kept documents by `entry` (the document leaves them, then goes where its sort key puts it when it
   * still matches and beats the last kept one, or when every match is kept); false when the reserve ran dry (fewer
   * than `first` kept while more may match): `q` is then to be searched again.
   */
  private apply(q: LiveQuery, entry: LiveChange): boolean {
    const kept = q.kept!;
    const order = q.order!;
    const at = kept.findIndex((r) => r.id === entry.id);
    // a vote moves only the documents' order by votes: their words, titles and times stay
    if (entry.kind === 'v' && q.sort !== 'VOTES_DESC') return true;
    if (at >= 0) kept.splice(at, 1);
    if (entry.kind !== 'd' && matches(q.parsed, new Set(entry.words))) {
      let score = 0;
      if (q.stats) {
        // an entry without frequencies (written before they were logged): search again
        if (!entry.frequencies || entry.length === undefined) return false;
        score = bm25(q.groups, q.stats, entry);
      }
      const r: Ranked = {
        id: entry.id,
        updated: entry.updated ?? 0,
        votes: entry.votes ?? 0,
        title: Buffer.from(entry.title ?? ''),
        score,
      };
      const last = kept.at(-1);
      if (q.complete || (last && order(r, last) < 0)) {
        const to = kept.findIndex((k) => order(r, k) < 0);
        kept.splice(to < 0 ? kept.length : to, 0, r);
      }
    }
    if (kept.length > q.first + reserve(q.first)) {
      kept.pop();
      q.complete = false;
    }
    return q.complete || kept.length >= q.first;
  }

  /** `q`'s top is its kept documents' first: its subscribers are told of the moves since they last looked. */
  private moveTop(q: LiveQuery): void {
    q.top = scoredTop(q);
    q.reads = new Map();
    const touched = q.touched;
    q.touched = new Set();
    this.tell(q, touched);
  }

  private tell(q: LiveQuery, touched: Set<string> | 'all'): void {
    for (const sub of q.subscribers) {
      if (touched === 'all') sub.touched = 'all';
      else if (sub.touched !== 'all') {
        for (const id of touched) sub.touched.add(id);
        if (sub.touched.size > TOUCHED_MAX) sub.touched = 'all';
      }
      sub.wake();
    }
  }

  /** `q` is to be searched again, document `id` having been written (null: unknown which, after a gap). */
  private mark(q: LiveQuery, id: string | null): void {
    this.dirty.add(q);
    if (id === null) q.touched = 'all';
    else if (q.touched !== 'all') q.touched.add(id);
  }

  /** Searches `q` again and wakes its subscribers with the documents written since; on a failure, marks it again. */
  private async evaluate(q: LiveQuery): Promise<void> {
    // one search of a live query at a time: the one running applies the entries that come meanwhile
    if (this.queries.get(q.key) !== q || q.inflight) return;
    const touched = q.touched;
    q.touched = new Set();
    if (q.order) q.inflight = [];
    try {
      const first = q.order ? q.first + reserve(q.first) : q.first;
      const relevance = q.order && sortOf(q.sort).then === 'bm25';
      const [found, stats] = await Promise.all([
        this.search.searchDocuments(this.evaluator, { query: q.query, sort: q.sort, first, offset: 0, counted: false }),
        relevance ? this.search.bm25Stats(q.groups) : null,
      ]);
      if (q.order) {
        q.stats = stats;
        q.kept = await this.ranked(q.sort, found.hits);
        q.complete = found.hits.length < first;
        const meanwhile = q.inflight ?? [];
        q.inflight = null;
        if (!meanwhile.every((entry) => this.apply(q, entry))) {
          this.dirty.add(q); // the reserve ran dry meanwhile
          this.schedule();
        }
        q.top = scoredTop(q);
      } else q.top = found.hits;
      q.reads = new Map();
    } catch (err) {
      q.inflight = null;
      // Searched again on the retry, with what it had to tell.
      if (touched === 'all') this.mark(q, null);
      else for (const id of touched) this.mark(q, id);
      this.dirty.add(q);
      this.log.warn({ err }, 'live search failed; retrying');
      setTimeout(() => this.schedule(), RETRY_MS).unref();
      return;
    }
    this.tell(q, touched);
    // the documents written while it ran that a search of their own waited for (a reserve run dry) are told too
    if (q.order && !this.dirty.has(q)) this.moveTop(q);
  }

  /** A search's hits as its sort compares them: the time or votes from their scores, titles read (title sorts). */
  private async ranked(sort: DocumentSort, hits: readonly SearchHit[]): Promise<Ranked[]> {
    const titles = new Map<string, string>();
    if (sort === 'TITLE_ASC' || sort === 'TITLE_DESC') {
      const byShard = new Map<Shard, string[]>();
      for (const { id } of hits) {
        const shard = this.shards.of(id);
        byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
      }
      await Promise.all(
        [...byShard].map(async ([shard, ids]) => {
          const found = await this.commands.readTitles({ shard, ids });
          ids.forEach((id, i) => titles.set(id, found[i]!));
        }),
      );
    }
    return hits.map((h) => ({
      id: h.id,
      updated: sort.startsWith('UPDATED') ? Math.round(h.score * 1000) : 0,
      votes: sort === 'VOTES_DESC' ? h.score : 0,
      title: Buffer.from(titles.get(h.id) ?? ''),
      score: sort === 'RELEVANCE' ? h.score : 0,
    }));
  }
}

/**
 * The BM25 score of the document an index entry wrote, by `stats`, as searchDocuments.lua computes it (the same
 * operations in the same order, so that an unchanged document scores the same): a group's term frequency is the sum
 * of its words' weighted frequencies.
 */
function bm25(groups: string[][], stats: Bm25Stats, entry: LiveChange): number {
  const frequency = new Map(entry.words.map((w, i) => [w, entry.frequencies![i]!]));
  const { k1, b } = BM25;
  const norm = k1 * (1 - b + (b * entry.length!) / stats.avgLength);
  let score = 0;
  groups.forEach((words, g) => {
    const tf = words.reduce((n, w) => n + (frequency.get(w) ?? 0), 0);
    score = score + stats.idf[g]! * ((tf * (k1 + 1)) / (tf + norm));
  });
  return score;
}

/** Whether a document with `words` matches `parsed` (no prefix term): a word of every group, none excluded. */
const matches = (parsed: ParsedQuery, words: ReadonlySet<string>): boolean =>
  parsed.groups.every((group) => group.some((t) => words.has(t.word))) &&
  !parsed.exclude.some((t) => words.has(t.word));

/** `q`'s top from its kept documents, each with the score searchDocuments gives it. */
function scoredTop(q: LiveQuery): SearchHit[] {
  const { score } = sortOf(q.sort);
  return q.kept!.slice(0, q.first).map((r, i) => ({
    id: r.id,
    score:
      score === 'position'
        ? i + 1
        : q.sort === 'VOTES_DESC'
          ? r.votes
          : q.sort === 'RELEVANCE'
            ? r.score
            : r.updated / 1000,
  }));
}

/** Whether a score that moved is a change by itself: the sort's own key (not a position, not RELEVANCE's drift). */
const scoreMoves = (sort: DocumentSort): boolean => sortOf(sort).score !== 'position' && sortOf(sort).then !== 'bm25';

/**
 * The changes that turn `from` into `to`, in the order a client applies them: LEFT removes a document; ENTERED and
 * UPDATED remove it when present and insert it at `position`. First every LEFT, then by ascending position each
 * document that entered, was written (`touched`), whose score moved (when `scores`), or is not yet where `to` has it.
 */
export function changesOf(
  from: readonly SearchHit[],
  to: readonly SearchHit[],
  touched: ReadonlySet<string> | 'all',
  scores: boolean,
): { kind: SearchChangeKind; id: string; score: number; position: number | null }[] {
  const kept = new Set(to.map((h) => h.id));
  const before = new Map(from.map((h) => [h.id, h.score]));
  const out: ReturnType<typeof changesOf> = [];
  const list: string[] = [];
  for (const h of from)
    if (kept.has(h.id)) list.push(h.id);
    else out.push({ kind: 'LEFT', id: h.id, score: h.score, position: null });
  to.forEach((h, position) => {
    const changed = touched === 'all' || touched.has(h.id) || (scores && before.get(h.id) !== h.score);
    if (list[position] === h.id && !changed) return;
    const at = list.indexOf(h.id);
    if (at >= 0) list.splice(at, 1);
    list.splice(position, 0, h.id);
    out.push({ kind: at >= 0 ? 'UPDATED' : 'ENTERED', id: h.id, score: h.score, position });
  });
  return out;
}
