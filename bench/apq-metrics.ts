/**
 * What GET /metrics' figures and automatic persisted queries cost `{ me }`, against METRICS=off in the same run
 * (`npm run bench:apq-metrics`; issue 26, bench (d)): HTTP throughput of gateway processes, then the time of an
 * operation inside the gateway (yoga's fetch, in this process: no HTTP, no load generator, no other process's
 * CPU placement). How it measures: docs/benchmarks.md.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { GatewayMetrics } from '../src/gateway/prometheus.js';
import { createGatewayYoga } from '../src/gateway/yoga.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { closeRedisClient, createRedisClient } from '../src/redis/clients.js';
import { createServices } from '../src/services/index.js';
import {
  checkoutCommit,
  HOST,
  alternate,
  badCount,
  cpuSeconds,
  freePort,
  graphql,
  httpOk,
  median,
  positiveInt,
  progress,
  runBench,
  signUpBenchUser,
  spawnGateway,
  startRedis,
  waitFor,
  type LoadSample,
  type LoadTarget,
} from './support/processes.js';

const SECONDS = positiveInt('BENCH_SECONDS', 2);
const ROUNDS = positiveInt('BENCH_ROUNDS', 21);
const WARMUP_SECONDS = 1;
const CONNECTIONS = 50;
/** Each target's median against METRICS=off's. */
const AIM = 0.95;
/** In-process: operations per round and target, and how many are in flight at once. */
const IN_PROCESS_OPERATIONS = positiveInt('BENCH_OPERATIONS', 20_000);
const IN_PROCESS_CONCURRENCY = 50;

const ME_QUERY = 'query Me { me { id } }';
const ME_HASH = createHash('sha256').update(ME_QUERY).digest('hex');
const PERSISTED = { persistedQuery: { version: 1, sha256Hash: ME_HASH } };

/** A commit to measure as it was, METRICS=on, beside the others (BENCH_BEFORE, e.g. the one before /metrics). */
const BEFORE = process.env.BENCH_BEFORE;

interface Variant {
  name: string;
  metrics: 'on' | 'off';
  /** Whether the load sends the hash alone (APQ) rather than the query. */
  apq: boolean;
  /** The gateway's entry, when not this tree's src/server.ts. */
  entry?: string;
}

const VARIANTS: Variant[] = [
  { name: 'METRICS=off, query', metrics: 'off', apq: false },
  { name: 'METRICS=on, query', metrics: 'on', apq: false },
  { name: 'METRICS=on, APQ hash', metrics: 'on', apq: true },
];

interface Gateway {
  variant: Variant;
  pid: number;
  url: string;
  target: LoadTarget;
}

async function startGateway(variant: Variant, index: number, redisUrl: string): Promise<Gateway> {
  const port = await freePort();
  progress(`starting gateway "${variant.name}" on ${port}`);
  const child = spawnGateway(
    `gateway ${variant.name}`,
    {
      NODE_ENV: 'production',
      HOST,
      PORT: String(port),
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'warn',
      WORKER: 'off',
      KEY_PREFIX: `bench-apq-metrics-${index}:`,
      METRICS: variant.metrics,
    },
    variant.entry,
  );
  const url = `http://${HOST}:${port}`;
  await waitFor(`gateway ${variant.name} /readyz`, () => httpOk(`${url}/readyz`));
  const { username, auth } = await signUpBenchUser(url);
  // One `Me` before the load: a sanity check, and the response every request of the load must get.
  const me = await graphql(`${url}/graphql`, ME_QUERY, auth);
  if ((me.data.me as { id?: string } | null)?.id !== username)
    throw new Error(`sanity check failed: ${ME_QUERY} gave ${me.text}, expected id "${username}"`);
  if (variant.apq) {
    // Registers the query (its hash with it), then checks that the hash alone now gets the same answer.
    const register = await post(url, auth, { query: ME_QUERY, operationName: 'Me', extensions: PERSISTED });
    const byHash = await post(url, auth, { operationName: 'Me', extensions: PERSISTED });
    if (register !== me.text || byHash !== me.text)
      throw new Error(`APQ sanity check failed: registering gave ${register}, the hash alone ${byHash}`);
  }
  const body = JSON.stringify(
    variant.apq ? { operationName: 'Me', extensions: PERSISTED } : { query: ME_QUERY, operationName: 'Me' },
  );
  return {
    variant,
    pid: child.proc.pid!,
    url,
    target: { name: variant.name, url: `${url}/graphql`, headers: auth, body, expectBody: me.text },
  };
}

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<string> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return res.text();
}

/** The value of a sample line of a Prometheus scrape (0 when absent). */
function sample(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

async function main(): Promise<number> {
  const redisServer = await startRedis();
  const variants = BEFORE
    ? [
        ...VARIANTS,
        {
          name: `${BEFORE} (before), METRICS=on, query`,
          metrics: 'on' as const,
          apq: false,
          entry: checkoutCommit(BEFORE),
        },
      ]
    : VARIANTS;
  const gateways: Gateway[] = [];
  for (const [i, v] of variants.entries()) gateways.push(await startGateway(v, i, redisServer.url));

  const cpuBefore = gateways.map((g) => cpuSeconds(g.pid));
  const { warmups, samples } = await alternate(
    gateways.map((g) => g.target),
    { rounds: ROUNDS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS },
  );
  const cpuUsed = gateways.map((g, i) => cpuSeconds(g.pid) - cpuBefore[i]!);

  const baseline = median(samples[0]!.map((s) => s.rps));
  const rows = gateways.map((g, i) => {
    const ss = samples[i]!;
    const sum = (k: keyof LoadSample['bad']) => ss.reduce((acc, s) => acc + s.bad[k], 0);
    const served = [warmups[i]!, ...ss].reduce((acc, s) => acc + s.sent, 0);
    const rps = median(ss.map((s) => s.rps));
    return {
      target: g.target.name,
      ...Object.fromEntries(ss.map((s, r) => [`round ${r + 1}`, Math.round(s.rps)])),
      'median req/s': Math.round(rps),
      'vs off': Number((rps / baseline).toFixed(3)),
      'p50 ms': median(ss.map((s) => s.p50)),
      'p99 ms': median(ss.map((s) => s.p99)),
      'CPU µs/req': Math.round((cpuUsed[i]! / served) * 1e6),
      non2xx: sum('non2xx'),
      'errors (incl. timeouts)': sum('errors'),
      mismatches: sum('mismatches'),
    };
  });
  console.log(
    `\n${ROUNDS} rounds x ${SECONDS}s, ${CONNECTIONS} connections, pipelining 1, ${ME_QUERY} (APQ: the hash alone), targets in turn, reversed every other round`,
  );
  console.table(rows);
  const before = BEFORE ? rows[rows.length - 1]! : undefined;
  for (const row of rows.slice(1)) {
    if (row === before) continue;
    const met = row['vs off'] >= AIM;
    console.log(`${row.target}: median ${row['vs off']} x METRICS=off (aim >= ${AIM}: ${met ? 'met' : 'NOT met'})`);
    if (!before) continue;
    const ratio = row['median req/s'] / before['median req/s'];
    console.log(
      `${row.target}: median ${ratio.toFixed(3)} x ${before.target} (aim >= ${AIM}: ${ratio >= AIM ? 'met' : 'NOT met'})`,
    );
  }
  console.log(
    'CPU µs/req: the gateway process’s CPU over warm-ups and rounds (its idle time included) per request sent',
  );

  // The figures moved with the load: each METRICS=on gateway's /metrics counts every `Me` it answered (and at most
  // every one sent), and the APQ gateway found every hash in memory.
  const problems: string[] = [];
  const checks = [];
  for (const [i, g] of gateways.entries()) {
    const text = await (await fetch(`${g.url}/metrics`)).text();
    const runs = [warmups[i]!, ...samples[i]!];
    // +1: the sanity check's `Me`; APQ: +2 (registering, and the hash alone).
    const extra = g.variant.apq ? 3 : 1;
    const sent = runs.reduce((acc, s) => acc + s.sent, extra);
    const answered = runs.reduce((acc, s) => acc + s.answered, extra);
    const counted = sample(text, 'gateway_operations_total{operation="Me"}');
    const fromMemory = sample(text, 'gateway_persisted_queries_lookups_total{found="memory"}');
    if (g.variant.entry) continue; // the commit before may have no /metrics
    checks.push({ target: g.target.name, '/metrics "Me"': counted, 'APQ from memory': fromMemory, sent, answered });
    if (g.variant.metrics === 'off' && counted !== 0) problems.push(`${g.target.name} counted ${counted}`);
    if (g.variant.metrics === 'on' && (counted < answered || counted > sent))
      problems.push(`${g.target.name} counted ${counted}, expected ${answered} to ${sent}`);
    if (g.variant.apq && (fromMemory < answered - extra || fromMemory > sent))
      problems.push(`${g.target.name} found ${fromMemory} hashes in memory, expected about ${answered - extra}`);
  }
  console.log('\nGET /metrics after the load; sent and answered include warm-ups and the sanity checks');
  console.table(checks);
  const failed = rows.filter((_, i) => samples[i]!.some((s) => badCount(s) > 0));
  if (failed.length > 0) problems.push(`bad responses from ${failed.map((r) => r.target).join(', ')}`);
  if (problems.length > 0) {
    console.log(`FAILED: ${problems.join('; ')}; the figures are not valid`);
    return 1;
  }
  console.log('answers and counts checked');
  return inProcess(redisServer.url, variants);
}

/** This tree's modules, or (a variant with an `entry`) those of the commit checked out beside it. */
async function modulesOf(variant: Variant) {
  if (!variant.entry)
    return { loadConfig, createLogger, createRedisClient, createServices, createGatewayYoga, GatewayMetrics };
  const src = path.dirname(variant.entry);
  const load = (file: string) => import(path.join(src, file)) as Promise<Record<string, unknown>>;
  const [config, logger, clients, services, yoga, prometheus] = await Promise.all([
    ...['config.ts', 'logger.ts', 'redis/clients.ts', 'services/index.ts', 'gateway/yoga.ts'].map(load),
    // A commit from before GET /metrics has none.
    load('gateway/prometheus.ts').catch(() => undefined),
  ]);
  return {
    loadConfig: config!.loadConfig as typeof loadConfig,
    createLogger: logger!.createLogger as typeof createLogger,
    createRedisClient: clients!.createRedisClient as typeof createRedisClient,
    createServices: services!.createServices as typeof createServices,
    // Its createGatewayYoga may take no `prometheus`: it ignores what it does not know.
    createGatewayYoga: yoga!.createGatewayYoga as typeof createGatewayYoga,
    GatewayMetrics: prometheus?.GatewayMetrics as typeof GatewayMetrics | undefined,
  };
}

/**
 * The same three variants inside this process: a yoga of each (the gateway's, on the services of its own KEY_PREFIX),
 * `IN_PROCESS_OPERATIONS` operations through its fetch, 50 at a time, in rounds alternating as above; µs per operation.
 */
async function inProcess(redisUrl: string, variants: Variant[]): Promise<number> {
  const apps = [];
  for (const [i, variant] of variants.entries()) {
    const m = await modulesOf(variant);
    const log = m.createLogger('silent');
    const config = m.loadConfig({
      REDIS_URL: redisUrl,
      KEY_PREFIX: `bench-apq-metrics-in-${i}:`,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
      RATE_LIMIT_PER_MINUTE: '0',
      SIGNUPS_PER_MINUTE: '0',
      METRICS: variant.metrics,
    });
    if (config.redis.kind !== 'url') throw new Error('the bench runs on its own redis-server');
    const redis = m.createRedisClient(config.redis, log);
    const services = m.createServices(redis, config, log);
    const prometheus = m.GatewayMetrics && new m.GatewayMetrics({ config, services, log });
    const yoga = m.createGatewayYoga({
      config,
      services,
      log,
      prometheus: prometheus!,
      stopping: new AbortController().signal,
    });
    const context = { address: HOST, requestId: 'bench', log };
    const call = async (body: unknown, token?: string) => {
      const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
      const res = await yoga.fetch(
        `http://${HOST}/graphql`,
        { method: 'POST', headers, body: JSON.stringify(body) },
        context,
      );
      return res.text();
    };
    const signUp = await call({
      query: `mutation { signUp(username: "bench_in_${i}", password: "benchpassword") { token } }`,
    });
    const token = (JSON.parse(signUp) as { data: { signUp: { token: string } } }).data.signUp.token;
    const expected = await call({ query: ME_QUERY, operationName: 'Me' }, token);
    if (variant.apq) await call({ query: ME_QUERY, operationName: 'Me', extensions: PERSISTED }, token);
    const body = variant.apq
      ? { operationName: 'Me', extensions: PERSISTED }
      : { query: ME_QUERY, operationName: 'Me' };
    apps.push({ variant, close: () => services.close(), redis, call: () => call(body, token), expected });
  }
  const micros = apps.map((): number[] => []);
  let wrong = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    const order = apps.map((_, i) => i);
    if (round % 2 === 0) order.reverse();
    for (const i of order) {
      const app = apps[i]!;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: IN_PROCESS_CONCURRENCY }, async () => {
          while (next++ < IN_PROCESS_OPERATIONS) if ((await app.call()) !== app.expected) wrong++;
        }),
      );
      // Round 0 warms up and is not kept.
      if (round > 0) micros[i]!.push(((performance.now() - started) * 1000) / IN_PROCESS_OPERATIONS);
    }
    progress(`in-process round ${round}/${ROUNDS}`);
  }
  const base = median(micros[0]!);
  const before = apps.findIndex((app) => app.variant.entry);
  console.log(
    `\nin process: ${ROUNDS} rounds (after one discarded) of ${IN_PROCESS_OPERATIONS} operations per target, ${IN_PROCESS_CONCURRENCY} at a time, through the gateway's yoga (no HTTP)`,
  );
  console.table(
    apps.map((app, i) => {
      const m = median(micros[i]!);
      const b = before >= 0 ? median(micros[before]!) : undefined;
      return {
        target: app.variant.name,
        ...Object.fromEntries(micros[i]!.map((x, r) => [`round ${r + 1}`, Number(x.toFixed(1))])),
        'median µs/op': Number(m.toFixed(2)),
        'µs/op more than off': Number((m - base).toFixed(2)),
        'speed vs off': Number((base / m).toFixed(3)),
        ...(b === undefined
          ? {}
          : { 'µs/op more than before': Number((m - b).toFixed(2)), 'speed vs before': Number((b / m).toFixed(3)) }),
      };
    }),
  );
  for (const app of apps) {
    await app.close();
    await closeRedisClient(app.redis);
  }
  if (wrong > 0) {
    console.log(`FAILED: ${wrong} in-process answers differed from the expected one; the figures are not valid`);
    return 1;
  }
  console.log('in-process answers checked');
  return 0;
}

await runBench(main);
