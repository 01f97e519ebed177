/**
 * What searches the deployment runs, for the dashboard (`searchActivity`, admins): searches per second by kind and
 * the hour's busiest queries with the documents they found. Each process counts its searches in memory as they end
 * (nothing on the search's path goes to Redis) and adds them to Redis every METRICS_FLUSH_MS, one script per flush
 * (per minute, when a flush spans two), or sooner once PENDING_MAX distinct queries wait. Bounded whatever clients
 * send: a query's text is cut to SEARCH_QUERY_TEXT_MAX characters, an hour keeps SEARCH_TOP_KEPT queries
 * (Space-Saving), the rates a few minutes and the queries two hours; a flush that fails is logged and dropped.
 */
import type { Logger } from 'pino';
import type { DocumentCommands, Shard } from '../../redis/documents/commands.js';
import { checkPage, type Page } from '../shared/paging.js';
import type { Shards } from '../shared/shards.js';
import type { ParsedQuery } from './query.js';
import { DOCUMENT_SORTS, type DocumentSort } from './sorts.js';

/** A query's text, folded (lower case, single spaces), is counted by its first this many characters. */
export const SEARCH_QUERY_TEXT_MAX = 100;
/** The queries kept per hour. */
export const SEARCH_TOP_KEPT = 200;
/** The whole seconds of rates `searchActivity` reads by default, and the most it reads (and Redis keeps). */
export const RATE_WINDOW: Page = { default: 60, max: 120 };
const HOUR_TTL_SECONDS = 2 * 3600;
export const BUSIEST_PAGE: Page = { default: 10, max: 100 };
/** Distinct queries a process keeps in memory before it flushes early. */
const PENDING_MAX = 1000;

/** What a query does, besides its sort: several words (AND), synonyms (OR), exclusions (NOT), prefixes (PREFIX). */
export const QUERY_SHAPES = ['AND', 'OR', 'NOT', 'PREFIX'] as const;
/** A search is counted under its sort and under each shape its query has. */
export const SEARCH_KINDS: readonly string[] = [...DOCUMENT_SORTS, ...QUERY_SHAPES];

export interface SearchRate {
  kind: string;
  /** The first second of `counts`. */
  from: Date;
  /** Searches of the kind in each second from `from`, one per second of the window. */
  counts: number[];
}

export interface BusyQuery {
  query: string;
  searches: number;
  /** How many documents its last search found. */
  found: number;
}

export interface SearchActivityDeps {
  commands: DocumentCommands;
  shards: Shards<Shard>;
  log: Logger;
  /** How often what was counted goes to Redis (METRICS_FLUSH_MS). */
  flushMs: number;
}

/** What a process counted of one minute (and its hour) since its last flush. */
interface Pending {
  minute: number;
  hour: number;
  rates: Map<string, number>;
  queries: Map<string, { searches: number; found: number }>;
}

export class SearchActivity {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards<Shard>;
  private readonly log: Logger;
  private readonly flushMs: number;
  private pending = new Map<number, Pending>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(deps: SearchActivityDeps) {
    ({ commands: this.commands, shards: this.shards, log: this.log, flushMs: this.flushMs } = deps);
  }

  /** Counts a search that ran, in memory until the next flush. */
  count(a: { query: string; parsed: ParsedQuery; sort: DocumentSort; found: number }): void {
    const { groups, exclude } = a.parsed;
    const shapes = {
      AND: groups.length > 1,
      OR: groups.some((g) => g.length > 1),
      NOT: exclude.length > 0,
      PREFIX: [...groups.flat(), ...exclude].some((t) => t.prefix),
    };
    const second = Math.floor(Date.now() / 1000);
    const minute = Math.floor(second / 60);
    let pending = this.pending.get(minute);
    if (!pending) {
      pending = { minute, hour: Math.floor(second / 3600), rates: new Map(), queries: new Map() };
      this.pending.set(minute, pending);
    }
    for (const kind of [a.sort, ...QUERY_SHAPES.filter((s) => shapes[s])]) {
      const field = `${kind} ${second}`;
      pending.rates.set(field, (pending.rates.get(field) ?? 0) + 1);
    }
    const query = foldQuery(a.query);
    const counted = pending.queries.get(query);
    pending.queries.set(query, { searches: (counted?.searches ?? 0) + 1, found: a.found });
    if (pending.queries.size >= PENDING_MAX) void this.flush();
    else if (!this.timer) {
      this.timer = setInterval(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Adds what was counted since the last flush to Redis (the timer does this every flushMs). */
  async flush(): Promise<void> {
    const batches = [...this.pending.values()];
    this.pending = new Map();
    await Promise.all(
      batches.map((b) =>
        this.commands
          .countSearches({
            minute: b.minute,
            hour: b.hour,
            rates: [...b.rates],
            queries: [...b.queries].map(([query, q]) => [query, q.searches, q.found] as const),
            kept: SEARCH_TOP_KEPT,
            rateTtlSeconds: RATE_WINDOW.max + 60,
            hourTtlSeconds: HOUR_TTL_SECONDS,
          })
          .catch((err: unknown) => this.log.warn({ err }, 'search: counting searches failed; those are dropped')),
      ),
    );
  }

  /** Stops the timer and flushes once more. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** The documents indexed, over every shard. */
  async documents(): Promise<number> {
    await this.shards.ready();
    const counts = await Promise.all(this.shards.all.map((shard) => this.commands.documentCount({ shard })));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Searches per second of each kind that ran in the last `seconds` whole seconds (kinds with none left out). */
  async rates({ seconds }: { seconds: number }): Promise<SearchRate[]> {
    checkPage('seconds', seconds, RATE_WINDOW.max);
    const last = Math.floor(Date.now() / 1000) - 1;
    const first = last - seconds + 1;
    const minutes = [];
    for (let m = Math.floor(first / 60); m <= Math.floor(last / 60); m++) minutes.push(m);
    const read = await Promise.all(minutes.map((minute) => this.commands.searchRates({ minute })));
    const counts = new Map<string, number[]>();
    for (const fields of read)
      for (const [field, value] of Object.entries(fields)) {
        const [kind = '', second = ''] = field.split(' ');
        const at = Number(second) - first;
        if (at < 0 || at >= seconds) continue;
        let series = counts.get(kind);
        if (!series) counts.set(kind, (series = new Array<number>(seconds).fill(0)));
        series[at] = Number(value);
      }
    return SEARCH_KINDS.filter((kind) => counts.has(kind)).map((kind) => ({
      kind,
      from: new Date(first * 1000),
      counts: counts.get(kind)!,
    }));
  }

  /** The `first` busiest queries of this hour, busiest first. */
  async busiest({ first }: { first: number }): Promise<BusyQuery[]> {
    checkPage('first', first, BUSIEST_PAGE.max);
    return this.commands.busiestQueries({ hour: Math.floor(Date.now() / 3_600_000), first });
  }
}

/** How a query is counted: lower case, single spaces, its first SEARCH_QUERY_TEXT_MAX characters. */
export const foldQuery = (query: string): string =>
  query.trim().replace(/\s+/g, ' ').toLowerCase().slice(0, SEARCH_QUERY_TEXT_MAX);
