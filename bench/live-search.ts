/**
 * Live search (`npx tsx bench/live-search.ts`): BENCH_LIVE_QUERIES searchChanged subscriptions (BENCH_DISTINCT
 * distinct queries, 20 a socket) over BENCH_PROCESSES gateway processes on a private Redis, while one client
 * indexes documents at BENCH_RATE a second for BENCH_SECONDS, each one entering the top of one distinct query.
 * Measured: the latency from indexDocument returning to the ENTERED arriving at each subscriber of that query (every
 * one checked: a change that never came, or came at a wrong position, is counted and fails the run), the Redis
 * commands per write (INFO commandstats, commands run by scripts included) beside the naive baseline measured in
 * the same run (each live query searching again on every write: the Redis commands of one search, measured here,
 * times the live queries), and the idle Redis commands a second with every live query held and with a tenth of them.
 * How it measures: docs/benchmarks.md "Live search".
 */
import type { Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import { wsClient } from '../test/support/clients.js';
import {
  HOST,
  freePort,
  graphql,
  httpOk,
  positiveInt,
  progress,
  runBench,
  signUpBenchUser,
  sleep,
  spawnGateway,
  startRedis,
  waitFor,
} from './support/processes.js';

const PROCESSES = positiveInt('BENCH_PROCESSES', 2);
const LIVE = positiveInt('BENCH_LIVE_QUERIES', 2000);
const DISTINCT = positiveInt('BENCH_DISTINCT', 200);
const RATE = positiveInt('BENCH_RATE', 100);
const SECONDS = positiveInt('BENCH_SECONDS', 10);
const IDLE_SECONDS = positiveInt('BENCH_IDLE_SECONDS', 10);
/** Documents per distinct query before the run (each query's top is full: FIRST of them). */
const PER_QUERY = 10;
const FIRST = 10;
/** searchChanged subscriptions a socket holds (LIVE_QUERIES_PER_SOCKET's default). */
const PER_SOCKET = 20;
const SEARCH_SAMPLES = 100;
const P99_AIM_MS = 100;
const PER_WRITE_AIM = 20;

const SUBSCRIBE = `subscription($q: String!) { searchChanged(query: $q, sort: UPDATED_DESC, first: ${FIRST}) { kind documentId position } }`;
const INDEX = 'mutation($id: ID!, $t: String!, $c: String!) { indexDocument(id: $id, title: $t, content: $c) { id } }';
const SEARCH = `query($q: String!) { searchDocuments(query: $q, sort: UPDATED_DESC, first: ${FIRST}) { documents { id } } }`;

const word = (q: number) => `live${q}`;
const filler = (n: number) => Array.from({ length: 5 }, (_, i) => `filler${(n * 7 + i * 13) % 1000}`).join(' ');
const quantile = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

/** Every command Redis ran so far (commands of scripts included), INFO itself left out. */
async function commands(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') total += Number(m[2]);
  return total;
}

async function main(): Promise<number> {
  const failures: string[] = [];
  const { url: redisUrl } = await startRedis();
  const redis = new Redis(redisUrl);
  const urls: string[] = [];
  for (let p = 0; p < PROCESSES; p++) {
    const port = await freePort();
    spawnGateway(`gateway-${p}`, { REDIS_URL: redisUrl, PORT: String(port), HOST, METRICS: 'off', WORKER: 'off' });
    urls.push(`http://${HOST}:${port}`);
  }
  for (const url of urls) await waitFor(`${url}/readyz`, () => httpOk(`${url}/readyz`));
  const { auth } = await signUpBenchUser(urls[0]!);
  const token = auth.authorization!.replace('Bearer ', '');
  const post = (p: number, query: string, variables: Record<string, unknown>) =>
    graphql(`${urls[p % PROCESSES]}/graphql`, query, auth, variables);

  progress(`indexing ${DISTINCT * PER_QUERY} documents`);
  for (let i = 0; i < DISTINCT * PER_QUERY; i += 20)
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        post(0, INDEX, { id: `seed-${i + j}`, t: `seed ${i + j}`, c: `${word((i + j) % DISTINCT)} ${filler(i + j)}` }),
      ),
    );

  progress(`subscribing ${LIVE} live queries (${DISTINCT} distinct) over ${LIVE / PER_SOCKET} sockets`);
  const sockets: Client[] = [];
  /** Per live query: its distinct query, whether its first top came, and when each new document arrived. */
  const lives: { q: number; ready: boolean; arrivals: Map<string, { at: number; position: number | null }> }[] = [];
  const unsubscribe: (() => void)[] = [];
  for (let i = 0; i < LIVE; i++) {
    const s = Math.floor(i / PER_SOCKET);
    const client = (sockets[s] ??= wsClient(`ws://${new URL(urls[s % PROCESSES]!).host}/graphql`, token));
    const live = {
      q: i % DISTINCT,
      ready: false,
      arrivals: new Map<string, { at: number; position: number | null }>(),
    };
    lives.push(live);
    let initial = 0;
    unsubscribe.push(
      client.subscribe<{ searchChanged: { kind: string; documentId: string; position: number | null } }>(
        { query: SUBSCRIBE, variables: { q: word(live.q) } },
        {
          next: (r) => {
            const c = r.data?.searchChanged;
            if (!c) {
              failures.push(`live query ${i}: ${JSON.stringify(r.errors)}`);
              return;
            }
            if (!live.ready && ++initial === FIRST) live.ready = true;
            if (c.kind === 'ENTERED' && c.documentId.startsWith('new-') && !live.arrivals.has(c.documentId))
              live.arrivals.set(c.documentId, { at: performance.now(), position: c.position });
          },
          error: (err) => failures.push(`live query ${i}: ${JSON.stringify(err)}`),
          complete: () => undefined,
        },
      ),
    );
  }
  await waitFor('every first top', () => Promise.resolve(lives.every((l) => l.ready)), 120_000, 200);
  await sleep(2000);

  progress(`measuring one search's Redis commands (${SEARCH_SAMPLES} searches)`);
  let before = await commands(redis);
  for (let i = 0; i < SEARCH_SAMPLES; i++) await post(0, SEARCH, { q: word(i % DISTINCT) });
  const perSearch = ((await commands(redis)) - before) / SEARCH_SAMPLES;

  progress(`writing ${RATE}/s for ${SECONDS} s`);
  const writes: { id: string; q: number; returned: number }[] = [];
  before = await commands(redis);
  const started = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (let k = 0; k < RATE * SECONDS; k++) {
    const due = started + (k * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const w = { id: `new-${k}`, q: k % DISTINCT, returned: 0 };
    writes.push(w);
    inFlight.push(
      post(k, INDEX, { id: w.id, t: w.id, c: `${word(w.q)} ${filler(k)}` }).then(
        () => (w.returned = performance.now()),
        (err: unknown) => failures.push(`write ${w.id}: ${String(err)}`),
      ),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  const expected = (q: number) => lives.filter((l) => l.q === q);
  await waitFor(
    'every change',
    () => Promise.resolve(writes.every((w) => expected(w.q).every((l) => l.arrivals.has(w.id)))),
    10_000,
    100,
  ).catch(() => undefined);
  const perWrite = ((await commands(redis)) - before) / writes.length;

  const latencies: number[] = [];
  let missing = 0;
  let misplaced = 0;
  for (const w of writes)
    for (const l of expected(w.q)) {
      const arrival = l.arrivals.get(w.id);
      if (!arrival) missing++;
      else if (arrival.position !== 0) misplaced++;
      else latencies.push(Math.max(0, arrival.at - w.returned));
    }
  latencies.sort((a, b) => a - b);
  if (missing + misplaced > 0) failures.push(`${missing} changes never came, ${misplaced} at a wrong position`);

  progress(`idle: ${IDLE_SECONDS} s with ${LIVE} live queries, then with ${LIVE / 10}`);
  const idle = async () => {
    await sleep(2000);
    const at = await commands(redis);
    await sleep(IDLE_SECONDS * 1000);
    return ((await commands(redis)) - at) / IDLE_SECONDS;
  };
  const idleAll = await idle();
  unsubscribe.forEach((u, i) => i % 10 !== 0 && u());
  const idleTenth = await idle();

  const naive = LIVE * perSearch;
  const changes = latencies.length;
  console.log(
    `\nlive search: ${LIVE} live queries (${DISTINCT} distinct, ${PER_SOCKET} a socket, sort UPDATED_DESC, first ${FIRST}) ` +
      `on ${PROCESSES} gateway processes (rate limits off, METRICS=off, one private redis-server); ${writes.length} writes ` +
      `at ${(writes.length / elapsed).toFixed(0)}/s, each entering the top of one distinct query (${LIVE / DISTINCT} subscribers)`,
  );
  console.log(
    `| figure | ours | naive baseline (every live query searches again on each write) | ratio |\n|---|---|---|---|`,
  );
  console.log(
    `| write returned -> ENTERED at the subscriber, ms | p50 ${quantile(latencies, 0.5).toFixed(1)}, p99 ${quantile(latencies, 0.99).toFixed(1)} (${changes} changes) | — | — |`,
  );
  console.log(
    `| Redis commands per write | ${perWrite.toFixed(1)} | ${naive.toFixed(0)} (${LIVE} × ${perSearch.toFixed(1)} a search) | ${(naive / perWrite).toFixed(0)}x fewer |`,
  );
  console.log(
    `| idle Redis commands per second | ${idleAll.toFixed(2)} with ${LIVE} live queries, ${idleTenth.toFixed(2)} with ${LIVE / 10} | — | — |`,
  );
  const p99 = quantile(latencies, 0.99);
  if (!(p99 <= P99_AIM_MS)) failures.push(`p99 ${p99.toFixed(1)} ms is above the aim of ${P99_AIM_MS} ms`);
  if (!(naive / perWrite >= PER_WRITE_AIM)) failures.push(`Redis work per write is not ${PER_WRITE_AIM}x below naive`);
  for (const s of sockets) await s.dispose();
  redis.disconnect();
  for (const f of failures.slice(0, 20)) console.log(`FAILED: ${f}`);
  if (failures.length === 0) console.log('every change checked; the aims are met');
  return failures.length === 0 ? 0 : 1;
}

void runBench(main);
