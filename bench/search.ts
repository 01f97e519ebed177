/**
 * Documents and search on the SpamAssassin corpus (`npm run bench:search`): indexing, queries of every kind at 1
 * and 50 in flight through the service (alone, and loading the page's titles as the GraphQL query does) and
 * through GraphQL, beside the book's SINTERSTORE + SORT on one key space and MiniSearch in process, on the same
 * documents in the same run, every answer checked against counts computed here from the corpus; where one search's
 * round trips and Redis time go, step by step, against the book's; then page 1 against page 100, Redis memory under
 * a flood of distinct queries, and the Redis work of one cold query asked by many users against that of as many
 * different queries. How it measures: docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Redis } from 'ioredis';
import MiniSearch from 'minisearch';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { closeRedisClient, createRedisClient } from '../src/redis/clients.js';
import { parseQuery } from '../src/services/documents/query.js';
import type { DocumentSort } from '../src/services/documents/sorts.js';
import { wordsOf } from '../src/services/documents/text.js';
import { createServices } from '../src/services/index.js';
import { loadCorpus, type CorpusDocument } from '../test/support/corpus.js';
import { LIMITS_OFF } from '../test/support/limits.js';
import {
  HOST,
  checkoutCommit,
  sleep,
  freePort,
  httpOk,
  median,
  positiveInt,
  progress,
  rawPoster,
  runBench,
  signUpBenchUser,
  spawnGateway,
  startRedis,
  waitFor,
} from './support/processes.js';
import { timed, timedSync, type Timing } from './support/timing.js';
import type { RedisClient } from '../src/redis/clients.js';

const QUERIES = positiveInt('BENCH_QUERIES', 300);
const WIDE = positiveInt('BENCH_CONCURRENCY', 50);
const INDEX_CONCURRENCY = positiveInt('BENCH_INDEX_CONCURRENCY', 16);
const DISTINCT = positiveInt('BENCH_DISTINCT_QUERIES', 100_000);
const PAGE_DOCS = positiveInt('BENCH_PAGE_DOCS', 10_000);
const SHARED_USERS = positiveInt('BENCH_SHARED_USERS', 200);
const SHARED_SAMPLES = positiveInt('BENCH_SHARED_SAMPLES', 5);
const BREAKDOWN = positiveInt('BENCH_BREAKDOWN_QUERIES', 100);
/** A commit whose services answer the same queries on the same index in the same run (the service rows), as it was. */
const BEFORE = process.env.BENCH_BEFORE;
const PREFIX = 'bench-search:';
const BOOK = 'bench-book:';
const MiB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const fmt = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) => Number(n.toFixed(2));

// ---------------------------------------------------------------------------------------------------------------
// The book's approach: chapter 7's index_document, parse, parse_and_search and search_and_sort over one key space
// (sets idx:<word>, hashes kb:doc:<id>), as the book writes them: a MULTI for the set algebra, another for
// SCARD + SORT ... BY kb:doc:*->updated.

class BookSearch {
  constructor(private readonly redis: Redis) {}

  async index(d: CorpusDocument): Promise<void> {
    const multi = this.redis.multi();
    for (const w of new Set(wordsOf(`${d.title} ${d.content}`))) multi.sadd(`${BOOK}idx:${w}`, d.id);
    multi.hset(`${BOOK}kb:doc:${d.id}`, 'id', d.id, 'updated', Date.now());
    await multi.exec();
  }

  async search(query: string): Promise<{ count: number; ids: string[] }> {
    const { groups, exclude } = parseQuery(query);
    const multi = this.redis.multi();
    const temp = (keys: string[], op: 'sinterstore' | 'sunionstore' | 'sdiffstore') => {
      const id = `${BOOK}idx:${randomUUID()}`; // the book's uuid4 (a counter would name the keys of numeric words)
      multi[op](id, ...keys);
      multi.expire(id, 30);
      return id;
    };
    const sets = groups.map((g) =>
      g.length === 1
        ? `${BOOK}idx:${g[0]!.word}`
        : temp(
            g.map((t) => `${BOOK}idx:${t.word}`),
            'sunionstore',
          ),
    );
    let result = sets.length === 1 ? sets[0]! : temp(sets, 'sinterstore');
    if (exclude.length) result = temp([result, ...exclude.map((t) => `${BOOK}idx:${t.word}`)], 'sdiffstore');
    await multi.exec();
    const [[, count], [, ids]] = (await this.redis
      .multi()
      .scard(result)
      .sort(result, 'BY', `${BOOK}kb:doc:*->updated`, 'LIMIT', 0, 10, 'DESC')
      .exec()) as [[null, number], [null, string[]]];
    return { count, ids };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// MiniSearch over the same documents: our tokens (one distinct raw token per occurrence, so that a field's length
// counts every word as API.md's BM25 does), BM25 k1 1.2 and b 0.75.

function miniSearch(docs: CorpusDocument[]): MiniSearch {
  const m = new MiniSearch<{ id: string; text: string }>({
    fields: ['text'],
    tokenize: (t) => wordsOf(t).map((w, i) => `${w}\0${i}`),
    processTerm: (t) => (t.includes('\0') ? t.slice(0, t.indexOf('\0')) : t),
    searchOptions: { combineWith: 'AND', bm25: { k: 1.2, b: 0.75, d: 0 } },
  });
  m.addAll(docs.map((d) => ({ id: d.id, text: `${d.title} ${d.title} ${d.content}` })));
  return m;
}

/** The query as MiniSearch's query tree: AND of groups (OR of synonyms), AND_NOT the exclusions, prefixes. */
function miniQuery(query: string) {
  const { groups, exclude } = parseQuery(query);
  const term = (t: { word: string; prefix: boolean }) => ({ queries: [t.word], prefix: t.prefix });
  const all = { combineWith: 'AND', queries: groups.map((g) => ({ combineWith: 'OR', queries: g.map(term) })) };
  return exclude.length ? { combineWith: 'AND_NOT', queries: [all, ...exclude.map(term)] } : all;
}

// ---------------------------------------------------------------------------------------------------------------
// Query sets: words of one document (so that an AND has matches), of document frequency 5 to 2,000.

type Kind = 'and1' | 'and2' | 'and3' | 'plus/minus' | 'prefix' | 'relevance';
const KINDS: Kind[] = ['and1', 'and2', 'and3', 'plus/minus', 'prefix', 'relevance'];
/** The kinds of the AND aim. */
const AND_KINDS: Kind[] = ['and1', 'and2', 'and3'];

function querySets(docs: CorpusDocument[], df: Map<string, number>): Record<Kind, string[]> {
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const wordsOfDoc = () => {
    for (;;) {
      const d = pick(docs);
      const ws = [...new Set(wordsOf(`${d.title} ${d.content}`))].filter((w) => {
        const n = df.get(w) ?? 0;
        return n >= 5 && n <= 2000 && /^\p{L}+$/u.test(w);
      });
      if (ws.length >= 4) return ws;
    }
  };
  const take = (ws: string[], k: number) => {
    const out = new Set<string>();
    while (out.size < k) out.add(pick(ws));
    return [...out];
  };
  const sets = Object.fromEntries(KINDS.map((k) => [k, [] as string[]])) as Record<Kind, string[]>;
  for (let i = 0; i < QUERIES; i++) {
    const ws = wordsOfDoc();
    sets.and1.push(take(ws, 1).join(' '));
    sets.and2.push(take(ws, 2).join(' '));
    sets.and3.push(take(ws, 3).join(' '));
    const [a, b] = take(ws, 2) as [string, string];
    sets['plus/minus'].push(i % 2 ? `${a} +${pick([...df.keys()])} ${b}` : `${a} ${b} -${pick([...df.keys()])}`);
    sets.prefix.push(`${pick(ws.filter((w) => w.length >= 4)).slice(0, 3 + (i % 2))}*`);
    sets.relevance.push(take(ws, 1 + (i % 3)).join(' '));
  }
  return sets;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))![1]);
}

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for (let cursor = '0'; ;) {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
    if (cursor === '0') return keys;
  }
}

/** Deletes every shard's shared matches, so that the next searches compute theirs (docs/search.md). */
async function forgetMatches(redis: Redis): Promise<void> {
  const keys = await scanKeys(redis, `${PREFIX}docs:*:result:q:*`);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
}

/**
 * What the Redis server has done so far: its CPU seconds (user + system), the commands it ran (scripts' too), and
 * per command its calls and microseconds (`INFO commandstats`: a script's time includes its own commands').
 */
async function redisWork(
  redis: Redis,
): Promise<{ cpu: number; commands: number; byCommand: Map<string, { calls: number; us: number }> }> {
  const cpu = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)![1]);
  const stats = await redis.info('commandstats');
  const byCommand = new Map(
    [...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)].map((m) => [
      m[1]!,
      { calls: Number(m[2]), us: Number(m[3]) },
    ]),
  );
  const commands = [...byCommand.values()].reduce((n, c) => n + c.calls, 0);
  return { cpu: field('used_cpu_user') + field('used_cpu_sys'), commands, byCommand };
}

/** Per search, the commands that took the most Redis time between two readings of `redisWork`. */
function largestSteps(
  before: Awaited<ReturnType<typeof redisWork>>,
  after: Awaited<ReturnType<typeof redisWork>>,
  searches: number,
): string {
  const steps = [...after.byCommand]
    .map(([command, c]) => {
      const b = before.byCommand.get(command) ?? { calls: 0, us: 0 };
      return { command, calls: (c.calls - b.calls) / searches, us: (c.us - b.us) / searches };
    })
    .filter((c) => c.calls > 0 && c.command !== 'info')
    .sort((a, b) => b.us - a.us);
  return steps
    .slice(0, 4)
    .map((c) => `${c.command} ${c.calls.toFixed(1)}x ${Math.round(c.us)}`)
    .join(', ');
}

/**
 * The number of documents a query matches, computed here from the corpus's words (the reference every timed answer
 * is checked against): every group (a word and its synonyms, a prefix's `prefixMax` most frequent words, ties in
 * word order, as docs/api.md says) has one of its words, no excluded word is there.
 */
function referenceCounts(postings: Map<string, Set<string>>, prefixMax: number) {
  const byDf = [...postings.keys()].sort((a, b) => postings.get(b)!.size - postings.get(a)!.size || (a < b ? -1 : 1));
  const words = (t: { word: string; prefix: boolean }) =>
    t.prefix ? byDf.filter((w) => w.startsWith(t.word)).slice(0, prefixMax) : [t.word];
  const union = (terms: { word: string; prefix: boolean }[]) =>
    new Set(terms.flatMap(words).flatMap((w) => [...(postings.get(w) ?? [])]));
  return (query: string): number => {
    const { groups, exclude } = parseQuery(query);
    const [first, ...rest] = groups.map(union);
    const out = union(exclude);
    return [...first!].filter((id) => rest.every((g) => g.has(id)) && !out.has(id)).length;
  };
}

/** One step of a search as Redis ran it: calls and microseconds per search (SLOWLOG at 0 µs: every command). */
interface Step {
  step: string;
  calls: number;
  us: number;
}

/**
 * Runs `run` over `queries` one at a time and reports where each search went: the commands the client sent, in
 * batches written together (in one turn of the event loop, before a reply to any of them came back; a batch whose
 * every reply came before the answer is a trip the answer waited for; the rest, sent along, are not waited for), and the Redis time of each command or script (SLOWLOG with a 0 µs
 * threshold, scripts named by their SHA), per search. `clients` names the connections whose commands count.
 */
async function breakdown(
  redis: Redis,
  client: RedisClient | Redis,
  clients: Set<string>,
  queries: string[],
  run: (q: string) => Promise<unknown>,
): Promise<{ steps: Step[]; waited: number; batches: number; commands: number; us: number }> {
  const scripts = new Map<string, string>(
    Object.entries((client as unknown as { scriptsSet: Record<string, { sha: string }> }).scriptsSet).map(
      ([name, script]) => [script.sha, name],
    ),
  );
  const target = client as unknown as { sendCommand(c: { promise: Promise<unknown> }): unknown };
  const send = target.sendCommand.bind(target);
  let batch: { sent: number; done: number } | null = null;
  let current: { sent: number; done: number }[] = [];
  let commands = 0;
  target.sendCommand = (c) => {
    if (!batch) {
      const b = (batch = { sent: 0, done: Infinity });
      current.push(b);
      setImmediate(() => (batch = null));
    }
    const b = batch;
    b.sent++;
    commands++;
    const settled = () => {
      if (batch === b) batch = null; // what is sent after a reply is another trip
      if (--b.sent === 0) b.done = performance.now();
    };
    c.promise.then(settled, settled);
    return send(c);
  };
  await redis.config('SET', 'slowlog-max-len', '1000000');
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.slowlog('RESET');
  let waited = 0;
  let batches = 0;
  try {
    for (const q of queries) {
      await new Promise(setImmediate); // what the last search sent along is a batch of its own
      batch = null;
      current = [];
      await run(q);
      const answered = performance.now();
      waited += current.filter((b) => b.done <= answered).length;
      batches += current.length;
    }
    await sleep(100); // what was sent along, not waited for, runs too
  } finally {
    target.sendCommand = send;
    await redis.config('SET', 'slowlog-log-slower-than', '10000');
  }
  const log = (await redis.slowlog('GET', -1)) as [number, number, number, string[], string, string][];
  await redis.config('SET', 'slowlog-max-len', '128');
  const steps = new Map<string, Step>();
  for (const [, , us, args, , name] of log) {
    const command = args[0]!.toLowerCase();
    if (!clients.has(name) || command === 'slowlog' || command === 'config') continue;
    const step = command === 'evalsha' ? (scripts.get(args[1]!) ?? 'a script') : command;
    const s = steps.get(step) ?? { step, calls: 0, us: 0 };
    s.calls++;
    s.us += us;
    steps.set(step, s);
  }
  const n = queries.length;
  const per = [...steps.values()].map((s) => ({ step: s.step, calls: s.calls / n, us: s.us / n }));
  return {
    steps: per.sort((a, b) => b.us - a.us),
    waited: waited / n,
    batches: batches / n,
    commands: commands / n,
    us: per.reduce((a, s) => a + s.us, 0),
  };
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The services of `commit` (its src/ archived, as bench/support's checkoutCommit does), on a client of their own (a
 * client runs the scripts its own src/ defines), over the same Redis and prefix: its key layout must be ours.
 */
async function servicesAt(commit: string, env: Record<string, string>) {
  const src = path.dirname(checkoutCommit(commit));
  const [configModule, clientsModule, servicesModule] = (await Promise.all([
    import(path.join(src, 'config.ts')),
    import(path.join(src, 'redis/clients.ts')),
    import(path.join(src, 'services/index.ts')),
  ])) as [
    { loadConfig: typeof loadConfig },
    { createRedisClient: typeof createRedisClient; closeRedisClient: typeof closeRedisClient },
    { createServices: typeof createServices },
  ];
  const log = createLogger('warn');
  const config = configModule.loadConfig(env);
  const client = clientsModule.createRedisClient(config.redis as { kind: 'url'; url: string }, log, 'bench-before');
  return {
    services: servicesModule.createServices(client, config, log),
    close: () => clientsModule.closeRedisClient(client),
  };
}

async function main(): Promise<number> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  const log = createLogger('warn');
  const envFor = () => ({
    REDIS_URL: server.url,
    KEY_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    WORKER: 'off',
    METRICS: 'off',
    SEARCH_CONCURRENCY: '1000',
    ...LIMITS_OFF,
  });
  const config = loadConfig(envFor());
  const client = createRedisClient(config.redis as { kind: 'url'; url: string }, log, 'bench');
  const services = createServices(client, config, log);
  const user = 'bench_reader';
  const before = BEFORE ? await servicesAt(BEFORE, envFor()) : null;

  // 1. Indexing.
  progress('loading the SpamAssassin corpus');
  const docs = loadCorpus();
  const df = new Map<string, number>();
  const postingsOf = new Map<string, Set<string>>();
  for (const d of docs)
    for (const w of new Set(wordsOf(`${d.title} ${d.content}`))) {
      df.set(w, (df.get(w) ?? 0) + 1);
      if (!postingsOf.has(w)) postingsOf.set(w, new Set());
      postingsOf.get(w)!.add(d.id);
    }
  const expected = referenceCounts(postingsOf, config.search.prefixMax);
  const postings = [...df.values()].reduce((a, b) => a + b, 0);
  const indexRows: Record<string, string | number>[] = [];

  const runIndex = async (name: string, one: (d: CorpusDocument) => Promise<unknown>) => {
    const before = await usedMemory(redis);
    progress(`indexing ${docs.length} documents: ${name}`);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: INDEX_CONCURRENCY }, async () => {
        for (let i = next++; i < docs.length; i = next++) {
          await one(docs[i]!);
          if (i % 1000 === 999) progress(`  ${i + 1} documents`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const bytes = (await usedMemory(redis)) - before;
    indexRows.push({
      target: name,
      'docs/s': fmt(docs.length / seconds),
      'Redis MiB': Number((bytes / MiB).toFixed(1)),
      'bytes/posting': Math.round(bytes / postings),
    });
    return docs.length / seconds;
  };
  const ours = await runIndex(`service (SEARCH_SHARDS 4, ${INDEX_CONCURRENCY} in flight)`, (d) =>
    services.documents.indexDocument('bench_writer', d),
  );
  const book = new BookSearch(redis);
  await runIndex(`the book (SADD per word in a MULTI, ${INDEX_CONCURRENCY} in flight)`, (d) => book.index(d));
  progress('indexing the same documents in MiniSearch');
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const mini = miniSearch(docs);
  const miniSeconds = (performance.now() - t0) / 1000;
  gc();
  const heapBytes = process.memoryUsage().heapUsed - heap0;
  indexRows.push({
    target: 'MiniSearch (in process)',
    'docs/s': fmt(docs.length / miniSeconds),
    'Redis MiB': `${(heapBytes / MiB).toFixed(1)} (heap)`,
    'bytes/posting': Math.round(heapBytes / postings),
  });

  // 2. Queries.
  const sets = querySets(docs, df);
  const port = await freePort();
  progress(`starting the gateway on ${port}`);
  spawnGateway('gateway', { ...envFor(), HOST, PORT: String(port) });
  const base = `http://${HOST}:${port}`;
  await waitFor('gateway /readyz', () => httpOk(`${base}/readyz`));
  const { auth } = await signUpBenchUser(base);
  const SEARCH = `query($q: String!, $sort: DocumentSort) {
    searchDocuments(query: $q, sort: $sort) { totalCount documents { id title } } }`;
  const post = rawPoster(base, auth);
  const sortOf = (kind: Kind): DocumentSort => (kind === 'relevance' ? 'RELEVANCE' : 'UPDATED_DESC');
  const rows: Record<string, string | number>[] = [];
  /** The AND rows at WIDE in flight: where the Redis server's time went (the AND aim's breakdown). */
  const steps: Record<string, string | number>[] = [];
  const results: Record<string, Timing> = {};
  /** Wrong or failed answers per target (every timed answer is checked against the corpus's own counts). */
  const wrong: Record<string, number> = {};
  const checked =
    (label: string, answer: (q: string) => Promise<boolean>) =>
    async (q: string): Promise<number> => {
      try {
        if (await answer(q)) return 1;
      } catch (err) {
        if (!wrong[label]) progress(`  ${label}: ${String(err)}`);
      }
      wrong[label] = (wrong[label] ?? 0) + 1;
      return 0;
    };
  const pageOf = (total: number) => Math.min(10, total);
  const titled = (docs: readonly ({ title: string } | null)[], total: number) =>
    docs.length === pageOf(total) && docs.every((d) => typeof d?.title === 'string' && d.title.length > 0);
  const searchOf = (kind: Kind, q: string) =>
    services.search.searchDocuments(user, { query: q, sort: sortOf(kind), first: 10, offset: 0 });
  const targetsOf = (kind: Kind) => {
    const counts = new Map(sets[kind].map((q) => [q, expected(q)]));
    const targets: [string, number, (q: string) => Promise<boolean>][] = [];
    for (const c of [1, WIDE]) {
      targets.push([
        `service, ${c} in flight`,
        c,
        async (q) => {
          const r = await searchOf(kind, q);
          return r.totalCount === counts.get(q) && r.hits.length === pageOf(r.totalCount);
        },
      ]);
      if (before)
        targets.push([
          `service at ${BEFORE}, ${c} in flight`,
          c,
          async (q) => {
            const r = await before.services.search.searchDocuments(user, {
              query: q,
              sort: sortOf(kind),
              first: 10,
              offset: 0,
            });
            return r.totalCount === counts.get(q) && r.hits.length === pageOf(r.totalCount);
          },
        ]);
      targets.push([
        `service + the page's titles, ${c} in flight`,
        c,
        async (q) => {
          const r = await searchOf(kind, q);
          const docs = await services.documents.summaries(user, { ids: r.hits.map((h) => h.id) });
          return r.totalCount === counts.get(q) && titled(docs, r.totalCount);
        },
      ]);
      targets.push([
        `GraphQL, ${c} in flight`,
        c,
        async (q) => {
          const body = await post(JSON.stringify({ query: SEARCH, variables: { q, sort: sortOf(kind) } }));
          const { totalCount, documents } = (
            JSON.parse(body) as { data: { searchDocuments: { totalCount: number; documents: { title: string }[] } } }
          ).data.searchDocuments;
          return totalCount === counts.get(q) && titled(documents, totalCount);
        },
      ]);
      if (kind !== 'prefix' && kind !== 'relevance')
        targets.push([
          `the book (SINTERSTORE + SORT), ${c} in flight`,
          c,
          async (q) => {
            const r = await book.search(q);
            return r.count === counts.get(q) && r.ids.length === pageOf(r.count);
          },
        ]);
    }
    return { counts, targets };
  };
  // Every kind's queries once through every target, untimed, before any timed row: V8 compiles the gateway's and
  // this process's code then, not in the first kind's rows. Answers are still checked (a failure shows here).
  progress(`warm-up: every kind's ${QUERIES} queries once through every target, untimed`);
  for (const kind of KINDS)
    for (const [, c, answer] of targetsOf(kind).targets) await timed(sets[kind], c, checked('warm-up', answer));
  for (const kind of KINDS) {
    const queries = sets[kind];
    const { counts, targets } = targetsOf(kind);
    progress(`${kind}: ${queries.length} queries per target, e.g. "${queries[0]}"`);
    for (const [name, c, answer] of targets) {
      const label = `${kind} ${name}`;
      const one = checked(label, answer);
      await timed(queries.slice(0, 30), c, one); // warm-up
      wrong[label] = 0;
      await forgetMatches(redis); // each target computes every query's matches (none shared with the last)
      const work0 = await redisWork(redis);
      const cpu0 = process.cpuUsage();
      const r = await timed(queries, c, one);
      const cpu = process.cpuUsage(cpu0);
      const work = await redisWork(redis);
      results[label] = r;
      if (AND_KINDS.includes(kind) && c === WIDE && !name.startsWith('service at'))
        steps.push({
          queries: kind,
          target: name,
          'Redis CPU us/q': Math.round(((work.cpu - work0.cpu) * 1e6) / queries.length),
          'largest steps: command, calls/q, us/q': largestSteps(work0, work, queries.length),
        });
      rows.push({
        queries: kind,
        target: name,
        'p50 ms': ms(r.p50),
        'p99 ms': ms(r.p99),
        'queries/s': fmt(r.qps),
        'Redis CPU us/q': Math.round(((work.cpu - work0.cpu) * 1e6) / queries.length),
        'Redis commands/q': Number(((work.commands - work0.commands - 2) / queries.length).toFixed(1)),
        'bench process CPU us/q': Math.round((cpu.user + cpu.system) / queries.length),
        'wrong or failed': wrong[label] ?? 0,
      });
    }
    // MiniSearch expands a prefix to every word it starts (ours: the SEARCH_PREFIX_MAX most frequent): not checked
    const miniLabel = `${kind} MiniSearch`;
    wrong[miniLabel] = 0;
    const m = timedSync(queries, (q) => {
      const found = mini.search(miniQuery(q) as never);
      if (kind !== 'prefix' && found.length !== counts.get(q)) wrong[miniLabel]!++;
      return found.slice(0, 10).length;
    });
    results[miniLabel] = m;
    rows.push({
      queries: kind,
      target: 'MiniSearch, in process (top 10)',
      'p50 ms': ms(m.p50),
      'p99 ms': ms(m.p99),
      'queries/s': fmt(m.qps),
      'wrong or failed': kind === 'prefix' ? '(not checked)' : wrong[miniLabel],
    });
  }
  // { me } through the same gateway, the same way, for context
  const meQueries = Array.from({ length: QUERIES * 3 }, () => JSON.stringify({ query: '{ me { id } }' }));
  await timed(meQueries.slice(0, 50), WIDE, async (b) => (await post(b)).length);
  const me = await timed(meQueries, WIDE, async (b) => (await post(b)).length);

  // Where one search goes: its trips and Redis time, step by step, one at a time.
  progress(`breakdown: ${BREAKDOWN} queries per search kind, one at a time, SLOWLOG at 0 us`);
  const breaker = 'bench_breakdown';
  const bookClient = (await redis.client('GETNAME')) ?? '';
  const breakdowns: [string, Awaited<ReturnType<typeof breakdown>>][] = [];
  const and1 = sets.and1.slice(0, BREAKDOWN);
  for (const [name, queries, on, run] of [
    [
      'service, and1 UPDATED_DESC',
      and1,
      client,
      (q: string) => services.search.searchDocuments(breaker, { query: q, sort: 'UPDATED_DESC', first: 10, offset: 0 }),
    ],
    [
      "service + the page's titles, and1",
      and1,
      client,
      async (q: string) => {
        const r = await services.search.searchDocuments(breaker, {
          query: q,
          sort: 'UPDATED_DESC',
          first: 10,
          offset: 0,
        });
        return services.documents.summaries(breaker, { ids: r.hits.map((h) => h.id) });
      },
    ],
    [
      'service, relevance RELEVANCE',
      sets.relevance.slice(0, BREAKDOWN),
      client,
      (q: string) => services.search.searchDocuments(breaker, { query: q, sort: 'RELEVANCE', first: 10, offset: 0 }),
    ],
    ['the book, and1', and1, redis, (q: string) => book.search(q)],
  ] as const) {
    await forgetMatches(redis);
    breakdowns.push([name, await breakdown(redis, on, new Set([on === redis ? bookClient : 'bench']), queries, run)]);
  }

  // 3. Page 1 against page 100 of a 10,000-hit result.
  progress(`indexing ${PAGE_DOCS} small documents sharing a word, for pages`);
  let n = 0;
  await Promise.all(
    Array.from({ length: INDEX_CONCURRENCY }, async () => {
      for (let i = n++; i < PAGE_DOCS; i = n++)
        await services.documents.indexDocument('bench_writer', {
          id: `page${i}`,
          title: `page ${i}`,
          content: `pagesword number ${i % 97}`,
        });
    }),
  );
  const first = await services.search.searchDocuments(user, {
    query: 'pagesword',
    sort: 'UPDATED_DESC',
    first: 10,
    offset: 0,
  });
  const page = (offset: number) => async () =>
    (
      await services.search.searchDocuments(user, {
        query: 'pagesword',
        sort: 'UPDATED_DESC',
        first: 10,
        offset,
        resultId: first.resultId,
      })
    ).hits.length;
  await timed(
    Array.from({ length: 20 }, () => ''),
    1,
    page(990),
  ); // the first deep page makes the merged copy
  // page 1 and page 100 taken in turn, so that the machine's noise falls on both alike
  const pageLatencies = new Map<number, number[]>([
    [0, []],
    [990, []],
  ]);
  for (let i = 0; i < 600; i++) {
    const offset = i % 2 === 0 ? 0 : 990;
    const t0 = performance.now();
    await page(offset)();
    pageLatencies.get(offset)!.push(performance.now() - t0);
  }
  const page1 = { p50: median(pageLatencies.get(0)!) };
  const page100 = { p50: median(pageLatencies.get(990)!) };

  // 4. Memory under a flood of distinct queries from WIDE users.
  progress(`${fmt(DISTINCT)} distinct queries from ${WIDE} users`);
  const vocabulary = [...df.keys()].filter((w) => (df.get(w) ?? 0) >= 20).sort();
  const memory0 = await usedMemory(redis);
  let peak = memory0;
  const sampler = setInterval(() => void usedMemory(redis).then((m) => (peak = Math.max(peak, m))), 250);
  let done = 0;
  const floodStarted = performance.now();
  await Promise.all(
    Array.from({ length: WIDE }, async (_, w) => {
      for (let i = done++; i < DISTINCT; i = done++) {
        const q = `${vocabulary[i % vocabulary.length]} +${vocabulary[Math.floor(i / vocabulary.length) % vocabulary.length]}`;
        await services.search.searchDocuments(`flood_${w}`, { query: q, sort: 'UPDATED_DESC', first: 10, offset: 0 });
        if (i % 10_000 === 9_999)
          progress(`  ${fmt(i + 1)} queries, Redis ${((await usedMemory(redis)) / MiB).toFixed(0)} MiB`);
      }
    }),
  );
  clearInterval(sampler);
  const floodRate = DISTINCT / ((performance.now() - floodStarted) / 1000);
  let liveSets = 0;
  for (const key of await scanKeys(redis, `${PREFIX}docs:*:result:descriptions`)) liveSets += await redis.hlen(key);
  const memoryAtEnd = await usedMemory(redis);

  // 5. Shared matches: one cold query asked by SHARED_USERS users over two gateways, against as many different
  // queries, by the Redis server's CPU and commands.
  const port2 = await freePort();
  progress(`starting a second gateway on ${port2}; signing up ${SHARED_USERS} users`);
  spawnGateway('gateway-2', { ...envFor(), HOST, PORT: String(port2) });
  const base2 = `http://${HOST}:${port2}`;
  await waitFor('gateway-2 /readyz', () => httpOk(`${base2}/readyz`));
  const readers: ((body: string) => Promise<string>)[] = [];
  for (let i = 0; i < SHARED_USERS; i += 20)
    readers.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, SHARED_USERS - i) }, async (_, j) => {
          const via = (i + j) % 2 ? base2 : base;
          return rawPoster(via, (await signUpBenchUser(via)).auth);
        }),
      )),
    );
  const relevanceQueries = sets.relevance;
  const different = Array.from({ length: SHARED_USERS }, (_, i) => relevanceQueries[i % relevanceQueries.length]!);
  let sharedFailures = 0;
  /** Each reader asks its query once (WIDE in flight), all cold: the Redis work, and each answer's totalCount. */
  const round = async (queries: string[]) => {
    await forgetMatches(redis);
    const before = await redisWork(redis);
    const counts: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: WIDE }, async () => {
        for (let i = next++; i < queries.length; i = next++) {
          const body = JSON.stringify({ query: SEARCH, variables: { q: queries[i], sort: 'RELEVANCE' } });
          try {
            const reply = JSON.parse(await readers[i]!(body)) as { data: { searchDocuments: { totalCount: number } } };
            counts[i] = reply.data.searchDocuments.totalCount;
          } catch (err) {
            sharedFailures++;
            if (sharedFailures <= 3) progress(`  search failed: ${String(err)}`);
          }
        }
      }),
    );
    const after = await redisWork(redis);
    return { cpuMs: (after.cpu - before.cpu) * 1000, commands: after.commands - before.commands, counts };
  };
  progress(`shared matches: ${SHARED_USERS} different RELEVANCE queries, then ${SHARED_SAMPLES} queries asked by all`);
  const apart = await round(different);
  const together: { cpuMs: number; commands: number }[] = [];
  let sharedWrong = 0;
  for (let k = 0; k < SHARED_SAMPLES; k++) {
    const i = Math.floor((k * different.length) / SHARED_SAMPLES);
    const r = await round(different.map(() => different[i]!));
    // every user gets the count a search of their own gave in the round of different queries
    sharedWrong += r.counts.filter((c) => c !== apart.counts[i]).length;
    together.push(r);
  }
  const sharedCpu = median(together.map((r) => r.cpuMs));
  const sharedCommands = median(together.map((r) => r.commands));

  // Report.
  console.log(
    `\nIndexing: ${fmt(docs.length)} SpamAssassin mails (${fmt(df.size)} distinct words, ${fmt(postings)} postings), each target on its own keys of one redis-server`,
  );
  console.table(indexRows);
  console.log(
    '(our Redis bytes include each document: title, content, words and sort keys; the book stores postings and two fields)',
  );
  console.log(
    `\nQueries: ${QUERIES} per kind and target (sort UPDATED_DESC, RELEVANCE for "relevance"; first 10), after every kind's queries once through every target (gateway and in-process service warmed alike, untimed) and 30 discarded per row; wrong or failed in the warm-up: ${wrong['warm-up'] ?? 0}`,
  );
  console.table(rows);
  const at = (kind: string, target: string) => results[`${kind} ${target}`]!;
  const clean = (kinds: string[], targets: string[]) =>
    kinds.every((k) => targets.every((t) => (wrong[`${k} ${t}`] ?? 0) === 0));
  const theBook = `the book (SINTERSTORE + SORT), ${WIDE} in flight`;
  const andRatio = median(AND_KINDS.map((k) => at(k, `service, ${WIDE} in flight`).qps / at(k, theBook).qps));
  if (BEFORE)
    console.log(
      `\nservice / service at ${BEFORE}, same run: ` +
        KINDS.map((k) => {
          const ratio = (c: number) =>
            at(k, `service, ${c} in flight`).qps / at(k, `service at ${BEFORE}, ${c} in flight`).qps;
          return `${k} queries/s ${ratio(1).toFixed(2)} (1 in flight), ${ratio(WIDE).toFixed(2)} (${WIDE})`;
        }).join('; '),
    );
  const andClean = clean(AND_KINDS, [`service, ${WIDE} in flight`, theBook]);
  const relevance = at('relevance', 'service, 1 in flight').p50 / at('relevance', 'MiniSearch').p50;
  const relevanceClean = clean(['relevance'], ['service, 1 in flight', 'MiniSearch']);
  const titles = (c: number) => `service + the page's titles, ${c} in flight`;
  const gatewayMs = median(KINDS.map((k) => at(k, 'GraphQL, 1 in flight').p50 - at(k, titles(1)).p50));
  const gatewayRatio = median(KINDS.map((k) => at(k, `GraphQL, ${WIDE} in flight`).qps / at(k, titles(WIDE)).qps));
  const gatewayClean = clean(KINDS, ['GraphQL, 1 in flight', `GraphQL, ${WIDE} in flight`, titles(1), titles(WIDE)]);
  const graphqlToMe = median(KINDS.map((k) => at(k, `GraphQL, ${WIDE} in flight`).qps)) / me.qps;
  console.log(
    `{ me } through the same gateway, ${WIDE} in flight (context: it never reaches Redis): ${fmt(me.qps)} requests/s, p50 ${ms(me.p50)} ms; GraphQL searchDocuments queries/s / { me } requests/s, median over kinds: ${graphqlToMe.toFixed(2)}`,
  );
  console.log(
    `\nWhere the AND rows' Redis time goes at ${WIDE} in flight (INFO commandstats over each row; a script's microseconds include its own commands'; a service search runs a script per shard, beginSearch and endSearch)`,
  );
  console.table(steps);
  console.log(
    `\nWhere one search goes, ${BREAKDOWN} searches one at a time (every shard's matches deleted first, so each search computes them): the commands the client sent in batches written together (trips: batches whose replies the answer waited for; the rest are sent along), and each step's Redis time (SLOWLOG at 0 us; a script counts its own commands)`,
  );
  console.table(
    breakdowns.map(([name, b]) => ({
      search: name,
      'trips waited for': Number(b.waited.toFixed(2)),
      'batches sent': Number(b.batches.toFixed(2)),
      'commands sent': Number(b.commands.toFixed(2)),
      'Redis us': Math.round(b.us),
    })),
  );
  console.table(
    breakdowns.flatMap(([name, b]) =>
      b.steps.map((s) => ({
        search: name,
        step: s.step,
        'calls/search': Number(s.calls.toFixed(2)),
        'Redis us/search': Number(s.us.toFixed(1)),
      })),
    ),
  );
  console.log(
    `\nPages of a ${fmt(PAGE_DOCS)}-hit result (resultId, first 10): page 1 p50 ${ms(page1.p50)} ms, page 100 p50 ${ms(page100.p50)} ms; ratio page 100/page 1 = ${(page100.p50 / page1.p50).toFixed(2)}  (aim <= 1.0 within noise)`,
  );
  const perUser = config.search.resultsPerUser;
  console.log(
    `\nDistinct queries: ${fmt(DISTINCT)} ("a +b", sort UPDATED_DESC) from ${WIDE} users at ${fmt(floodRate)}/s, SEARCH_RESULT_TTL 300: ` +
      `Redis ${(memory0 / MiB).toFixed(1)} MiB before, peak ${(peak / MiB).toFixed(1)} MiB, ${(memoryAtEnd / MiB).toFixed(1)} MiB at the end with ${fmt(liveSets)} live result sets (bound: ${WIDE} users x SEARCH_RESULTS_PER_USER ${perUser} = ${fmt(WIDE * perUser)})`,
  );
  console.log(
    `\nShared matches: ${SHARED_USERS} users over two gateways, each asking once (RELEVANCE, first 10, ${WIDE} in flight, cold: no matches kept from before)`,
  );
  console.table([
    {
      asked: `${SHARED_USERS} different queries`,
      'Redis CPU ms': ms(apart.cpuMs),
      'Redis commands': fmt(apart.commands),
    },
    {
      asked: `one query by all (median of ${SHARED_SAMPLES} queries)`,
      'Redis CPU ms': ms(sharedCpu),
      'Redis commands': fmt(sharedCommands),
    },
  ]);
  console.log(`failed searches: ${sharedFailures}; answers that differ from the query's own search: ${sharedWrong}`);
  const sharedRatio = sharedCpu / apart.cpuMs;

  console.log(`\nContext (aims of earlier sessions, still measured):`);
  console.log(`  indexing docs/s through the service: ${fmt(ours)} (>= 1000: ${ours >= 1000 ? 'yes' : 'no'})`);
  console.log(
    `  Redis CPU of one cold query by ${SHARED_USERS} users / of ${SHARED_USERS} different ones: ${sharedRatio.toFixed(2)} (< 0.25 with no failed or wrong answer: ${sharedRatio < 0.25 && sharedFailures === 0 && sharedWrong === 0 ? 'yes' : 'no'})`,
  );

  console.log('\nAims:');
  const aim = (what: string, value: number, ok: boolean, answers: boolean) =>
    console.log(
      `  ${what}: ${value.toFixed(2)}  ${ok && answers ? 'met' : 'NOT met'}${answers ? '' : ' (wrong or failed answers: see the table)'}`,
    );
  aim(
    `AND queries/s at ${WIDE} in flight, service/book (SEARCH_SHARDS ${config.search.shards} on one redis-server), median of 1-3 words (aim >= 1.0)`,
    andRatio,
    andRatio >= 1,
    andClean,
  );
  aim('RELEVANCE p50, service at 1 in flight / MiniSearch (aim <= 1.0)', relevance, relevance <= 1, relevanceClean);
  aim(
    "ms the gateway adds to a search's p50 at 1 in flight over the service loading the page's titles, median over kinds (aim <= 0.8)",
    gatewayMs,
    gatewayMs <= 0.8,
    gatewayClean,
  );
  aim(
    `GraphQL queries/s at ${WIDE} in flight / the service loading the page's titles, median over kinds (aim >= 0.6)`,
    gatewayRatio,
    gatewayRatio >= 0.6,
    gatewayClean,
  );
  await services.close();
  await before?.close();
  await closeRedisClient(client);
  redis.disconnect();
  return 0;
}

await runBench(main);
