/**
 * The IP-to-city index on the full GeoLite2 country data (`npm run bench:geo`): import speed, Redis memory, and
 * lookups/s through GraphQL beside an in-process lookup over the same rows. How it measures: docs/benchmarks.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Redis } from 'ioredis';
import { keysOf } from '../test/support/keys.js';
import { parseAddress, parseBounds } from '../src/services/geo/ip.js';
import {
  HOST,
  ROOT,
  cpuSeconds,
  freePort,
  httpOk,
  median,
  positiveInt,
  progress,
  runBench,
  signUpBenchUser,
  spawnGateway,
  start,
  startRedis,
  stop,
  waitFor,
} from './support/processes.js';

const LOOKUPS = positiveInt('BENCH_LOOKUPS', 100_000);
const BATCH = positiveInt('BENCH_BATCH', 1000);
const CONCURRENCY = positiveInt('BENCH_CONCURRENCY', 8);
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
const SEED = positiveInt('BENCH_SEED', 1);
const IPV4_SHARE = 0.8;
const WARMUP = Math.min(LOOKUPS, 10 * BATCH);
const PREFIX = 'bench-geo:';
const DATA = path.join(ROOT, 'node_modules/@ip-location-db/geolite2-country');
const FILES = ['geolite2-country-ipv4.csv', 'geolite2-country-ipv6.csv'].map((f) => path.join(DATA, f));
const MiB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

// ---------------------------------------------------------------------------------------------------------------
// The in-process index

interface Table<T extends number | string> {
  starts: T[];
  ends: T[];
  countries: string[];
}
interface Index {
  4: Table<number>;
  6: Table<string>;
}

function loadIndex(files: string[]): Index {
  const rows = {
    4: [] as { start: string; end: string; country: string }[],
    6: [] as { start: string; end: string; country: string }[],
  };
  const interned = new Map<string, string>();
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [a = '', b = '', c = ''] = line.trim().split(',');
      const range = line.trim() && c ? parseBounds(a, b) : null;
      if (!range) continue;
      if (!interned.has(c)) interned.set(c, c);
      rows[range.family].push({ start: range.start, end: range.end, country: interned.get(c)! });
    }
  }
  const table = <T extends number | string>(family: 4 | 6, value: (hex: string) => T): Table<T> => {
    const rs = rows[family].sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
    return {
      starts: rs.map((r) => value(r.start)),
      ends: rs.map((r) => value(r.end)),
      countries: rs.map((r) => r.country),
    };
  };
  return { 4: table(4, (hex) => parseInt(hex, 16)), 6: table(6, (hex) => hex) };
}

function find<T extends number | string>(t: Table<T>, x: T): string | null {
  let lo = 0;
  let hi = t.starts.length - 1;
  let at = -1; // the greatest index whose start <= x
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (t.starts[mid]! <= x) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return at >= 0 && t.ends[at]! >= x ? t.countries[at]! : null;
}

function lookupLocal(index: Index, ip: string): string | null {
  const a = parseAddress(ip);
  if (!a) throw new Error(`bad sampled address ${ip}`);
  return a.family === 4 ? find(index[4], parseInt(a.hex, 16)) : find(index[6], a.hex);
}

// ---------------------------------------------------------------------------------------------------------------
// The sample

function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function sample(v6: Table<string>, n: number, seed: number): string[] {
  const u32 = mulberry32(seed);
  const ips: string[] = [];
  for (let i = 0; i < n; i++) {
    if (u32() / 2 ** 32 < IPV4_SHARE || v6.starts.length === 0) {
      const v = u32();
      ips.push(`${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`);
      continue;
    }
    const r = u32() % v6.starts.length;
    const start = BigInt(`0x${v6.starts[r]}`);
    const span = BigInt(`0x${v6.ends[r]}`) - start + 1n;
    const random = [u32(), u32(), u32(), u32()].reduce((acc, w) => (acc << 32n) | BigInt(w), 0n);
    const hex = (start + (random % span)).toString(16).padStart(32, '0');
    ips.push(hex.match(/.{4}/g)!.join(':'));
  }
  return ips;
}

// ---------------------------------------------------------------------------------------------------------------
// The two sides

interface Run {
  seconds: number;
  countries: (string | null)[];
  /** CPU seconds of the gateway and of redis-server during the run (gateway side only). */
  cpu?: { gateway: number; redis: number };
}

const QUERY = 'query ($ips: [String!]!) { citiesByIp(ips: $ips) { country } }';

async function gatewayRun(
  url: string,
  auth: Record<string, string>,
  ips: string[],
  pids: { gateway: number; redis: number },
): Promise<Run> {
  const bodies: string[] = [];
  for (let i = 0; i < ips.length; i += BATCH)
    bodies.push(JSON.stringify({ query: QUERY, variables: { ips: ips.slice(i, i + BATCH) } }));
  const countries = new Array<string | null>(ips.length);
  let next = 0;
  const worker = async () => {
    for (let b = next++; b < bodies.length; b = next++) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: bodies[b],
      });
      const text = await res.text();
      const json = JSON.parse(text) as { data?: { citiesByIp?: ({ country: string } | null)[] }; errors?: unknown };
      const found = json.data?.citiesByIp;
      const want = Math.min(BATCH, ips.length - b * BATCH);
      if (res.status !== 200 || json.errors || !found || found.length !== want) {
        throw new Error(`batch ${b}: HTTP ${res.status}, expected ${want} results: ${text.slice(0, 500)}`);
      }
      found.forEach((c, j) => (countries[b * BATCH + j] = c?.country ?? null));
    }
  };
  const cpu0 = { gateway: cpuSeconds(pids.gateway), redis: cpuSeconds(pids.redis) };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    seconds,
    countries,
    cpu: { gateway: cpuSeconds(pids.gateway) - cpu0.gateway, redis: cpuSeconds(pids.redis) - cpu0.redis },
  };
}

function localRun(index: Index, ips: string[]): Run {
  const started = performance.now();
  const countries = ips.map((ip) => lookupLocal(index, ip));
  return { seconds: (performance.now() - started) / 1000, countries };
}

function crossCheck(ips: string[], gateway: Run, local: Run): void {
  const bad = ips.flatMap((ip, i) =>
    gateway.countries[i] === local.countries[i]
      ? []
      : [`${ip}: gateway ${gateway.countries[i]}, in-process ${local.countries[i]}`],
  );
  if (bad.length)
    throw new Error(`${bad.length} of ${ips.length} answers differ, e.g.\n  ${bad.slice(0, 10).join('\n  ')}`);
}

// ---------------------------------------------------------------------------------------------------------------

async function usedMemory(redis: Redis): Promise<number> {
  const m = /^used_memory:(\d+)/m.exec(await redis.info('memory'));
  if (!m) throw new Error('INFO memory has no used_memory');
  return Number(m[1]);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');

async function main(): Promise<number> {
  if (BATCH > 1000) throw new Error('BENCH_BATCH must be at most 1000 (citiesByIp takes at most 1000 addresses)');
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url, { lazyConnect: true });
  await redis.connect();
  const env = {
    REDIS_URL: redisServer.url,
    REDIS_CLUSTER_NODES: '',
    KEY_PREFIX: PREFIX,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
  };

  // 1. Import through the real CLI.
  const before = await usedMemory(redis);
  progress(`importing ${FILES.map((f) => path.basename(f)).join(' + ')} with src/cli/import-cities.ts`);
  const importStarted = performance.now();
  const importer = start(
    'import-cities',
    process.execPath,
    ['--import', 'tsx', 'src/cli/import-cities.ts', ...FILES.flatMap((f) => ['--blocks', f])],
    env,
  );
  importer.proc.stderr?.on('data', (chunk: Buffer) =>
    chunk
      .toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => progress(`  ${l.trim()}`)),
  );
  await importer.exited;
  const importSeconds = (performance.now() - importStarted) / 1000;
  await stop(importer);
  const summary =
    /imported ([\d,]+) IPv4 and ([\d,]+) IPv6 ranges, ([\d,]+) cities, skipped (\d+) malformed rows, in [\d.]+ s \(([\d,]+) ranges\/s\)/.exec(
      importer.output(),
    );
  if (importer.proc.exitCode !== 0 || !summary)
    throw new Error(`import failed (exit ${importer.proc.exitCode}):\n${importer.output()}`);
  const num = (s: string) => Number(s.replaceAll(',', ''));
  const [ranges4, ranges6, cities, skipped, cliRate] = summary.slice(1).map((s) => num(s)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const rows = ranges4 + ranges6;
  const redisBytes = (await usedMemory(redis)) - before;
  const live = keysOf(PREFIX).geo();
  const [z4, z6] = [await redis.zcard(live.ranges4), await redis.zcard(live.ranges6)];
  if (z4 !== ranges4 || z6 !== ranges6)
    throw new Error(`ZCARD gives ${z4} IPv4 and ${z6} IPv6 ranges, the CLI said ${ranges4} and ${ranges6}`);

  // 4a. The in-process index over the same files (loaded now so the sample can draw from its IPv6 ranges).
  progress('loading the same files in process');
  gc();
  const heap0 = process.memoryUsage();
  const loadStarted = performance.now();
  const index = loadIndex(FILES);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  gc();
  const heap1 = process.memoryUsage();
  const localBytes = heap1.heapUsed + heap1.arrayBuffers - heap0.heapUsed - heap0.arrayBuffers;
  if (index[4].starts.length !== ranges4 || index[6].starts.length !== ranges6) {
    throw new Error(
      `in process: ${index[4].starts.length} IPv4 and ${index[6].starts.length} IPv6 ranges, the import: ${ranges4} and ${ranges6}`,
    );
  }

  // 2. The sample.
  const ips = sample(index[6], LOOKUPS, SEED);

  // 3. The gateway.
  const port = await freePort();
  progress(`starting gateway on ${port}`);
  const gateway = spawnGateway('gateway', { ...env, HOST, PORT: String(port), WORKER: 'off' });
  const base = `http://${HOST}:${port}`;
  await waitFor('gateway /readyz', () => httpOk(`${base}/readyz`));
  const { auth } = await signUpBenchUser(base);
  const pids = { gateway: gateway.proc.pid!, redis: redisServer.child.proc.pid! };
  const url = `${base}/graphql`;

  // 5. Warm-up, then rounds.
  progress(`warm-up: ${WARMUP} lookups on each side (discarded)`);
  crossCheck(
    ips.slice(0, WARMUP),
    await gatewayRun(url, auth, ips.slice(0, WARMUP), pids),
    localRun(index, ips.slice(0, WARMUP)),
  );
  const runs = { gateway: [] as Run[], local: [] as Run[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? (['gateway', 'local'] as const) : (['local', 'gateway'] as const);
    for (const side of order) {
      progress(`round ${round}/${ROUNDS}: ${side}, ${LOOKUPS} lookups`);
      const run = side === 'gateway' ? await gatewayRun(url, auth, ips, pids) : localRun(index, ips);
      runs[side].push(run);
      progress(`  ${fmt(LOOKUPS / run.seconds)} lookups/s`);
    }
    crossCheck(ips, runs.gateway.at(-1)!, runs.local.at(-1)!);
  }
  await redis.quit();

  // Report.
  const found = runs.local[0]!.countries.filter((c) => c !== null).length;
  const v4 = ips.filter((ip) => ip.includes('.')).length;
  console.log(
    `\nImport: ${FILES.map((f) => path.basename(f)).join(' + ')} through src/cli/import-cities.ts, redis-server ${redisServer.port}`,
  );
  console.table([
    {
      'rows (IPv4 + IPv6)': `${fmt(rows)} (${fmt(ranges4)} + ${fmt(ranges6)})`,
      cities,
      skipped,
      seconds: Number(importSeconds.toFixed(1)),
      'rows/s (wall, incl. start-up)': fmt(rows / importSeconds),
      'rows/s (CLI)': fmt(cliRate),
      'Redis MiB': Number((redisBytes / MiB).toFixed(1)),
      'bytes/row': Math.round(redisBytes / rows),
    },
  ]);
  console.log(
    `\nLookups: ${fmt(LOOKUPS)} addresses (${fmt(v4)} IPv4 uniform over 2^32, ${fmt(LOOKUPS - v4)} IPv6 inside imported ranges; ` +
      `${fmt(found)} found, ${fmt(LOOKUPS - found)} in gaps), ${ROUNDS} rounds alternating, seed ${SEED}`,
  );
  const perLookup = (k: 'gateway' | 'redis') => median(runs.gateway.map((r) => (r.cpu![k] / LOOKUPS) * 1e6)).toFixed(2);
  const sides = [
    {
      side: `gateway (GraphQL over HTTP, batches of ${BATCH}, ${CONCURRENCY} in flight)`,
      rs: runs.gateway,
      extra: `gateway ${perLookup('gateway')} + redis ${perLookup('redis')} µs CPU/lookup`,
    },
    {
      side: 'in-process (parseAddress + binary search)',
      rs: runs.local,
      extra: `load ${loadSeconds.toFixed(1)} s, ${(localBytes / MiB).toFixed(1)} MiB heap`,
    },
  ];
  const rates = sides.map((s) => median(s.rs.map((r) => LOOKUPS / r.seconds)));
  console.table(
    sides.map((s, i) => ({
      side: s.side,
      ...Object.fromEntries(s.rs.map((r, n) => [`round ${n + 1}`, fmt(LOOKUPS / r.seconds)])),
      'median lookups/s': fmt(rates[i]!),
      notes: s.extra,
    })),
  );
  console.log(
    `ratio median(gateway)/median(in-process) = ${(rates[0]! / rates[1]!).toFixed(4)}  (the in-process figure is the ceiling: no network, no GraphQL, no Redis; no aim)`,
  );
  console.log(`cross-check: all ${fmt(LOOKUPS)} gateway answers equal the in-process ones in every round`);
  return 0;
}

await runBench(main);
