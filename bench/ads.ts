/**
 * Ad targeting (`npm run bench:ads`): targetAd through the service and through GraphQL with 10,000 ads over 100
 * locations and 5,000 words, at 1 and 50 in flight, beside the book's target_ads + record_targeting_result (a MULTI
 * of set operations into temporary keys, then its recording) on the same ads in the same run, on a standalone Redis;
 * then the service and the book on a three-master cluster, with each master's share of the targeting work; then a
 * simulator of 100 ads with known click rates, run with the book's pick and with exploration, drawn into
 * docs/ads-simulation.svg. Every answer is checked (an ad where the page's locations have ads, none where they have
 * none), and a wrong one fails the aims. How it measures: docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createRedisClient, type RedisClient, type RedisEndpoint } from '../src/redis/clients.js';
import type { AdType } from '../src/services/ads/ads.js';
import { wordsOf } from '../src/services/documents/text.js';
import { createServices } from '../src/services/index.js';
import { startWorker } from '../src/worker/start.js';
import { LIMITS_OFF } from '../test/support/limits.js';
import { startCluster } from '../test/support/redis-servers.js';
import {
  HOST,
  ROOT,
  cpuSeconds,
  freePort,
  httpOk,
  positiveInt,
  progress,
  rawPoster,
  runBench,
  signUpBenchUser,
  spawnGateway,
  startRedis,
  waitFor,
} from './support/processes.js';
import { timed, type Timing } from './support/timing.js';

const ADS = positiveInt('BENCH_ADS', 10_000);
const LOCATIONS = positiveInt('BENCH_LOCATIONS', 100);
const VOCABULARY = positiveInt('BENCH_WORDS', 5_000);
const PAGES = positiveInt('BENCH_QUERIES', 300);
const WIDE = positiveInt('BENCH_CONCURRENCY', 50);
const SIM_ADS = positiveInt('BENCH_SIM_ADS', 100);
const SIM_TARGETINGS = positiveInt('BENCH_SIM_TARGETINGS', 100_000);
const SIM_WINDOW = positiveInt('BENCH_SIM_WINDOW', 2_000);
const SIM_SEED = positiveInt('BENCH_SIM_SEED', 3);
const SIM_RUNS = positiveInt('BENCH_SIM_RUNS', 3);
const fmt = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) => Number(n.toFixed(2));

/** A seeded generator, so that every run targets the same ads with the same pages. */
function generator(seed: number) {
  let s = seed;
  const random = () => (s = (s * 16807) % 2147483647) / 2147483647;
  return {
    random,
    int: (n: number) => Math.floor(random() * n),
    /** Zipf-like: small indexes far more often (word i of n with weight about 1 / (i + 1)). */
    zipf: (n: number) => Math.floor(Math.exp(random() * Math.log(n + 1))) - 1,
  };
}

interface BenchAd {
  id: string;
  locations: string[];
  content: string;
  type: AdType;
  value: number;
  budget?: number;
  dailyBudget?: number;
}

function corpus() {
  const g = generator(7);
  const words = Array.from({ length: VOCABULARY }, (_, i) => `w${i.toString(36)}x`);
  const text = (n: number) => Array.from({ length: n }, () => words[g.zipf(VOCABULARY)]).join(' ');
  const location = () => `loc${g.int(LOCATIONS)}`;
  const ads: BenchAd[] = Array.from({ length: ADS }, (_, i) => {
    const type: AdType = i % 5 === 3 ? 'CPA' : i % 5 === 4 ? 'CPM' : 'CPC';
    const value = type === 'CPC' ? 0.1 + 2 * g.random() : type === 'CPA' ? 1 + 20 * g.random() : 1 + 10 * g.random();
    return {
      id: `ad${i}`,
      locations: [...new Set([location(), ...(g.random() < 0.5 ? [location()] : [])])],
      content: text(10 + g.int(20)),
      type,
      value: Number(value.toFixed(3)),
      // budgets that are checked on every pick but do not run out during the bench
      ...(i % 2 === 0 ? { budget: 1e9 } : { dailyBudget: 1e8 }),
    };
  });
  const pages = Array.from({ length: PAGES }, () => ({
    locations: [...new Set([location(), ...(g.random() < 0.3 ? [location()] : [])])],
    content: `${text(30)} some words no ad has`,
  }));
  return { ads, pages };
}

// ---------------------------------------------------------------------------------------------------------------
// The book's chapter 7.3, as it writes it (index_ad, target_ads, record_targeting_result, update_cpms), on keys of
// its own: a MULTI of SUNIONSTORE, ZINTERSTOREs and ZUNIONSTOREs into temporary keys per targeting.

class BookAds {
  private readonly average: Record<string, number> = {};
  /** `prefix`: the keys' prefix (on a cluster with a hash tag: the book's MULTI needs every key on one slot). */
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async index(ad: BenchAd): Promise<void> {
    const m = this.redis.multi();
    for (const l of ad.locations) m.sadd(`${this.prefix}idx:req:${l}`, ad.id);
    const words = [...new Set(wordsOf(ad.content))];
    for (const w of words) m.zadd(`${this.prefix}idx:${w}`, 0, ad.id);
    const type = ad.type.toLowerCase();
    const value = ad.type === 'CPM' ? ad.value : (1000 * ad.value * (this.average[type] ?? 1)) / 1000;
    m.hset(`${this.prefix}type:`, ad.id, type);
    m.zadd(`${this.prefix}idx:ad:value:`, value, ad.id);
    m.zadd(`${this.prefix}ad:base_value:`, ad.value, ad.id);
    if (words.length) m.sadd(`${this.prefix}terms:${ad.id}`, ...words);
    await m.exec();
  }

  async target(locations: string[], content: string): Promise<string | null> {
    const temporary = () => `${this.prefix}idx:${randomUUID()}`;
    const m = this.redis.multi();
    const matched = temporary();
    m.sunionstore(matched, ...locations.map((l) => `${this.prefix}idx:req:${l}`)).expire(matched, 300);
    const base = temporary();
    m.zinterstore(base, 2, matched, `${this.prefix}idx:ad:value:`, 'WEIGHTS', 0, 1).expire(base, 30);
    const words = [...new Set(wordsOf(content))];
    const bonuses = words.map((w) => {
      const key = temporary();
      m.zinterstore(key, 2, matched, `${this.prefix}idx:${w}`, 'WEIGHTS', 0, 1).expire(key, 30);
      return key;
    });
    let targeted = base;
    if (bonuses.length) {
      const [min, max] = [temporary(), temporary()];
      m.zunionstore(min, bonuses.length, ...bonuses, 'AGGREGATE', 'MIN').expire(min, 30);
      m.zunionstore(max, bonuses.length, ...bonuses, 'AGGREGATE', 'MAX').expire(max, 30);
      targeted = temporary();
      m.zunionstore(targeted, 3, base, min, max, 'WEIGHTS', 1, 0.5, 0.5).expire(targeted, 30);
    }
    m.incr(`${this.prefix}ads:served:`).zrevrange(targeted, 0, 0);
    const replies = (await m.exec())!;
    const targetId = replies.at(-2)![1] as number;
    const [adId] = replies.at(-1)![1] as string[];
    if (!adId) return null;
    await this.record(targetId, adId, words);
    return adId;
  }

  private async record(targetId: number, adId: string, words: string[]): Promise<void> {
    const terms = new Set(await this.redis.smembers(`${this.prefix}terms:${adId}`));
    const matched = words.filter((w) => terms.has(w));
    const type = await this.redis.hget(`${this.prefix}type:`, adId);
    const m = this.redis.multi();
    if (matched.length) {
      m.sadd(`${this.prefix}terms:matched:${targetId}`, ...matched).expire(
        `${this.prefix}terms:matched:${targetId}`,
        900,
      );
    }
    m.incr(`${this.prefix}type:${type}:views:`);
    for (const w of matched) m.zincrby(`${this.prefix}views:${adId}`, 1, w);
    m.zincrby(`${this.prefix}views:${adId}`, 1, '');
    const views = Number((await m.exec())!.at(-1)![1]);
    if (views % 100 === 0) await this.updateCpms(adId);
  }

  private async updateCpms(adId: string): Promise<void> {
    const [[, type], [, baseValue], [, words]] = (await this.redis
      .multi()
      .hget(`${this.prefix}type:`, adId)
      .zscore(`${this.prefix}ad:base_value:`, adId)
      .smembers(`${this.prefix}terms:${adId}`)
      .exec()) as [[null, string], [null, string], [null, string[]]];
    const which = type === 'cpa' ? 'actions' : 'clicks';
    const [typeViews, typeClicks] = await this.redis.mget(
      `${this.prefix}type:${type}:views:`,
      `${this.prefix}type:${type}:${which}`,
    );
    this.average[type] = (1000 * Number(typeClicks ?? '1')) / Number(typeViews ?? '1');
    if (type === 'cpm') return;
    const viewKey = `${this.prefix}views:${adId}`;
    const clickKey = `${this.prefix}${which}:${adId}`;
    const [adViews, adClicks] = await Promise.all([this.redis.zscore(viewKey, ''), this.redis.zscore(clickKey, '')]);
    let adEcpm: number;
    if (Number(adClicks ?? 0) < 1) adEcpm = Number(await this.redis.zscore(`${this.prefix}idx:ad:value:`, adId));
    else {
      adEcpm = (1000 * Number(baseValue) * Number(adClicks)) / Number(adViews ?? 1);
      await this.redis.zadd(`${this.prefix}idx:ad:value:`, adEcpm, adId);
    }
    for (const w of words) {
      const [views, clicks] = await Promise.all([this.redis.zscore(viewKey, w), this.redis.zscore(clickKey, w)]);
      if (Number(clicks ?? 0) < 1) continue;
      const wordEcpm = (1000 * Number(baseValue) * Number(clicks)) / Number(views ?? 1);
      await this.redis.zadd(`${this.prefix}idx:${w}`, wordEcpm - adEcpm, adId);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The simulator: SIM_ADS CPC ads in one location with known click rates and values; every targeting's click is
// drawn from the picked ad's true rate. The oracle always shows the ad of the best value * rate.

interface SimulationRun {
  name: string;
  /** Share of the oracle's expected eCPM, per window of SIM_WINDOW targetings. */
  windows: number[];
  /** Over every targeting. */
  overall: number;
}

/** One run of the simulator (`run` numbers exploration's runs: each has keys and clicks of its own). */
async function simulate(
  name: string,
  redisUrl: string,
  exploration: boolean,
  truth: { rate: number; value: number }[],
  run = 0,
): Promise<SimulationRun> {
  const log = createLogger('warn');
  const config = loadConfig({
    REDIS_URL: redisUrl,
    KEY_PREFIX: `bench-sim-${exploration ? `explore${run}` : 'book'}:`,
    LOG_LEVEL: 'warn',
    ADS_EXPLORATION: exploration ? 'on' : 'off',
    ADS_FREQUENCY_CAP: '0',
    QUEUE_POLL_MS: '20',
    METRICS: 'off',
    ...LIMITS_OFF,
  });
  const client = createRedisClient(config.redis as { kind: 'url'; url: string }, log, 'bench-sim');
  const services = createServices(client, config, log);
  const worker = startWorker({ services, config, log });
  for (const [i, ad] of truth.entries())
    await services.ads.indexAd({ id: `sim${i}`, locations: ['sim'], content: '', type: 'CPC', value: ad.value });
  const g = generator(exploration ? 101 + run : 202);
  const best = Math.max(...truth.map((t) => t.value * t.rate));
  const earned: number[] = new Array<number>(SIM_TARGETINGS).fill(0);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < SIM_TARGETINGS; i = next++) {
        const target = (await services.ads.targetAd({ username: 'sim', address: HOST }, { locations: ['sim'] }))!;
        const ad = truth[Number(target.adId.slice(3))]!;
        earned[i] = (ad.value * ad.rate) / best;
        if (g.random() < ad.rate)
          await services.ads.recordClick({ targetingId: target.targetingId, adId: target.adId, action: false });
        if (i % 20_000 === 19_999) progress(`  ${name}: ${fmt(i + 1)} targetings`);
      }
    }),
  );
  await worker.stop(5000);
  await services.close();
  client.disconnect();
  const windows: number[] = [];
  for (let i = 0; i < SIM_TARGETINGS; i += SIM_WINDOW) {
    const slice = earned.slice(i, i + SIM_WINDOW);
    windows.push(slice.reduce((a, b) => a + b, 0) / slice.length);
  }
  return { name, windows, overall: earned.reduce((a, b) => a + b, 0) / SIM_TARGETINGS };
}

/** The book's and exploration's (mean) shares of the oracle over time, as an SVG line chart; each of exploration's
 * runs a thin line. */
function chart(runs: SimulationRun[], each: SimulationRun[], file: string): void {
  const [w, h, left, bottom, top, right] = [720, 360, 56, 40, 28, 150];
  const x = (i: number, n: number) => left + ((w - left - right) * (i + 0.5)) / n;
  const y = (share: number) => top + (h - top - bottom) * (1 - share);
  const colours = ['#c0392b', '#2471a3'];
  const grid = [0, 0.25, 0.5, 0.75, 0.95, 1]
    .map(
      (s) =>
        `<line x1="${left}" x2="${w - right}" y1="${y(s)}" y2="${y(s)}" stroke="#ddd"/>` +
        `<text x="${left - 6}" y="${y(s) + 4}" text-anchor="end">${Math.round(s * 100)} %</text>`,
    )
    .join('');
  const points = (r: SimulationRun) =>
    r.windows.map((s, i) => `${x(i, r.windows.length).toFixed(1)},${y(s).toFixed(1)}`).join(' ');
  const thin = each
    .map((r) => `<polyline fill="none" stroke="#a9cce3" stroke-width="1" points="${points(r)}"/>`)
    .join('');
  const lines = runs
    .map((r, k) => {
      const label = `${r.name}: ${(r.overall * 100).toFixed(1)} % overall`;
      return (
        `<polyline fill="none" stroke="${colours[k]}" stroke-width="2" points="${points(r)}"/>` +
        `<text x="${w - right + 8}" y="${y(r.windows.at(-1)!) + 4}" fill="${colours[k]}">${label}</text>`
      );
    })
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w + 120}" height="${h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="${left}" y="16" font-size="14">eCPM earned as a share of the oracle's, per ${fmt(SIM_WINDOW)} targetings (${SIM_ADS} CPC ads, ${fmt(SIM_TARGETINGS)} targetings)</text>
${grid}
<line x1="${left}" x2="${w - right}" y1="${h - bottom}" y2="${h - bottom}" stroke="#888"/>
<text x="${(w - right + left) / 2}" y="${h - 8}" text-anchor="middle">targetings (0 to ${fmt(SIM_TARGETINGS)})</text>
${thin}
${lines}
</svg>
`;
  writeFileSync(file, svg);
}

// ---------------------------------------------------------------------------------------------------------------

/** Indexes `ads` through `services` (16 at once), and in the book's keys, one at a time. */
async function indexAll(services: ReturnType<typeof createServices>, book: BookAds, ads: BenchAd[]): Promise<void> {
  let n = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = n++; i < ads.length; i = n++) await services.ads.indexAd(ads[i]!);
    }),
  );
  for (const ad of ads) await book.index(ad);
}

/** Microseconds a server spent in commands so far (INFO commandstats, every command: scripts, MULTIs, reads). */
async function commandUsec(server: Redis): Promise<number> {
  const info = await server.info('commandstats');
  return [...info.matchAll(/^cmdstat_[^:]+:calls=\d+,usec=(\d+),/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

async function main(): Promise<number> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  const log = createLogger('warn');
  const common = {
    KEY_PREFIX: 'bench-ads:',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    METRICS: 'off',
    ADS_EXPLORATION: 'on',
    ...LIMITS_OFF,
  };
  const env = { REDIS_URL: server.url, ...common };
  const config = loadConfig(env);
  const client = createRedisClient(config.redis as RedisEndpoint, log, 'bench');
  const services = createServices(client, config, log);
  const worker = startWorker({ services, config, log });
  const { ads, pages } = corpus();

  progress(`indexing ${fmt(ads.length)} ads over ${LOCATIONS} locations and ${fmt(VOCABULARY)} words, twice`);
  const book = new BookAds(redis, 'bench-book-ads:');
  await indexAll(services, book, ads);

  const port = await freePort();
  progress(`starting the gateway on ${port}`);
  const gateway = spawnGateway('gateway', { ...env, HOST, PORT: String(port) });
  const base = `http://${HOST}:${port}`;
  await waitFor('gateway /readyz', () => httpOk(`${base}/readyz`));
  // one signed-in viewer per caller in flight, as the service's targetings come from many viewers (one viewer
  // reading every page would meet its frequency caps)
  const posters = await Promise.all(
    Array.from({ length: WIDE }, async () => rawPoster(base, (await signUpBenchUser(base)).auth)),
  );
  const post = posters[0]!;
  let poster = 0;
  /** CPU ms per call of Redis (each of `servers`), the gateway and this process over `run`. */
  const withCpu = async (calls: number, servers: number[], run: () => Promise<Timing>) => {
    const before = {
      redis: servers.map(cpuSeconds),
      gateway: cpuSeconds(gateway.proc.pid!),
      bench: process.cpuUsage(),
    };
    const timing = await run();
    const perCall = (seconds: number) => ms((1000 * seconds) / calls);
    const self = process.cpuUsage(before.bench);
    const redisEach = servers.map((pid, i) => cpuSeconds(pid) - before.redis[i]!);
    return {
      timing,
      redisEach,
      cpu: {
        redis: perCall(redisEach.reduce((x, y) => x + y, 0)),
        gateway: perCall(cpuSeconds(gateway.proc.pid!) - before.gateway),
        bench: perCall((self.user + self.system) / 1e6),
      },
    };
  };
  const TARGET = `query($l: [String!]!, $c: String) { targetAd(locations: $l, content: $c) { targetingId ecpm ad { id } } }`;
  const indexes = pages.map((_p, i) => String(i));
  const page = (q: string) => pages[Number(q)]!;
  // every page's locations have ads: a right answer is an ad (budgets and 1,000 viewers keep every ad servable)
  const anAd = (adId: string | null | undefined) => (adId && /^ad\d+$/.test(adId) ? 1 : 0);
  let viewer = 0;
  const serviceTarget = (s: typeof services) => async (q: string) =>
    anAd((await s.ads.targetAd({ username: `bench${viewer++ % 1000}`, address: HOST }, page(q)))?.adId);
  const bookTarget = (b: BookAds) => async (q: string) => anAd(await b.target(page(q).locations, page(q).content));
  type Row = [name: string, inFlight: number, one: (q: string) => Promise<number>];
  const targets: Row[] = [];
  for (const c of [1, WIDE]) {
    targets.push([`service, standalone, ${c} in flight`, c, serviceTarget(services)]);
    const throughGraphQL = (where: (q: string) => string[], right: (adId: string | undefined) => number) => {
      return async (q: string) => {
        const body = JSON.stringify({ query: TARGET, variables: { l: where(q), c: page(q).content } });
        const one = posters[poster++ % posters.length]!;
        const reply = JSON.parse(await one(body)) as { data?: { targetAd: { ad: { id: string } } | null } };
        return reply.data === undefined ? 0 : right(reply.data.targetAd?.ad.id);
      };
    };
    targets.push([`GraphQL, standalone, ${c} in flight`, c, throughGraphQL((q) => page(q).locations, anAd)]);
    // the same request in a location without ads (the right answer: none): the gateway's cost without the pick
    if (c === WIDE)
      targets.push([
        `GraphQL, standalone, no ad in the location, ${c} in flight`,
        c,
        throughGraphQL(
          () => ['none'],
          (adId) => (adId === undefined ? 1 : 0),
        ),
      ]);
    targets.push([`the book (MULTI of set operations), standalone, ${c} in flight`, c, bookTarget(book)]);
  }
  const rows: Record<string, string | number>[] = [];
  const results: Record<string, Timing & { wrong: number }> = {};
  const measure = async ([name, c, one]: Row, servers: number[]) => {
    progress(`targetAd: ${name}`);
    await timed(indexes.slice(0, 100), c, one); // warm-up
    const calls = c === 1 ? indexes : [...indexes, ...indexes, ...indexes]; // each page three times when wide
    const { timing: r, cpu, redisEach } = await withCpu(calls.length, servers, () => timed(calls, c, one));
    results[name] = { ...r, wrong: calls.length - r.matches };
    rows.push({
      target: name,
      'p50 ms': ms(r.p50),
      'p99 ms': ms(r.p99),
      'targetings/s': fmt(r.qps),
      wrong: calls.length - r.matches,
      'CPU ms/call: Redis': cpu.redis,
      gateway: cpu.gateway,
      bench: cpu.bench,
    });
    return redisEach;
  };
  for (const row of targets) await measure(row, [server.child.proc.pid!]);
  const meQueries = Array.from({ length: PAGES * 3 }, () => JSON.stringify({ query: '{ me { id } }' }));
  await timed(meQueries.slice(0, 100), WIDE, async (b) => (await post(b)).length);
  const { timing: me, cpu: meCpu } = await withCpu(meQueries.length, [server.child.proc.pid!], () =>
    timed(meQueries, WIDE, async (b) => (await post(b)).length),
  );
  await worker.stop(5000);
  await services.close();
  client.disconnect();

  // The same ads on a three-master cluster: the service spreads them over its three shards (one per master); the
  // book's keys share one hash tag (its MULTI needs one slot), so it runs on one master.
  progress('starting a three-master cluster');
  const cluster = await startCluster();
  const clusterConfig = loadConfig({ REDIS_CLUSTER_NODES: cluster.target.nodes.join(','), ...common });
  const clusterClient = createRedisClient(clusterConfig.redis as RedisEndpoint, log, 'bench-cluster');
  const clusterServices = createServices(clusterClient, clusterConfig, log);
  const clusterWorker = startWorker({ services: clusterServices, config: clusterConfig, log });
  const clusterBook = new BookAds(clusterClient, 'bench-book-ads:{book}:');
  progress(`indexing the ads on the cluster, twice`);
  await indexAll(clusterServices, clusterBook, ads);
  const masters = cluster.servers.map((s) => new Redis({ host: HOST, port: s.port }));
  const masterPids = cluster.servers.map((s) => s.child.pid!);
  const shares = async (row: Row) => {
    const before = await Promise.all(masters.map(commandUsec));
    const cpu = await measure(row, masterPids);
    const commands = (await Promise.all(masters.map(commandUsec))).map((u, i) => u - before[i]!);
    const share = (xs: number[]) => xs.map((x) => `${Math.round((100 * x) / xs.reduce((a, b) => a + b, 0))} %`);
    return { name: row[0], commands: share(commands), cpu: share(cpu) };
  };
  const SERVICE_CLUSTER = `service, cluster of 3 masters (3 shards), ${WIDE} in flight`;
  const BOOK_CLUSTER = `the book (MULTI of set operations), cluster (its keys on one slot), ${WIDE} in flight`;
  const spread = [
    await shares([SERVICE_CLUSTER, WIDE, serviceTarget(clusterServices)]),
    await shares([BOOK_CLUSTER, WIDE, bookTarget(clusterBook)]),
  ];
  await clusterWorker.stop(5000);
  await clusterServices.close();
  clusterClient.disconnect();
  masters.forEach((m) => m.disconnect());
  await cluster.stop();

  progress(
    `simulating ${fmt(SIM_TARGETINGS)} targetings of ${SIM_ADS} ads, with the book's pick, then ${SIM_RUNS} times with exploration`,
  );
  const g = generator(SIM_SEED);
  const truth = Array.from({ length: SIM_ADS }, () => ({
    rate: 0.002 + 0.038 * g.random(),
    value: Number((0.1 + 0.9 * g.random()).toFixed(3)),
  }));
  const bookRun = await simulate("the book's running average", server.url, false, truth);
  const explorations: SimulationRun[] = [];
  for (let run = 0; run < SIM_RUNS; run++)
    explorations.push(await simulate(`exploration, run ${run + 1}`, server.url, true, truth, run));
  // exploration draws at random: its runs differ, and the aims take their mean
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const exploreRun: SimulationRun = {
    name: `exploration, mean of ${SIM_RUNS} runs`,
    windows: bookRun.windows.map((_w, i) => mean(explorations.map((r) => r.windows[i]!))),
    overall: mean(explorations.map((r) => r.overall)),
  };
  const svg = path.join(ROOT, 'docs', 'ads-simulation.svg');
  chart([bookRun, exploreRun], explorations, svg);
  redis.disconnect();

  console.log(
    `\ntargetAd: ${fmt(ads.length)} ads over ${LOCATIONS} locations and ${fmt(VOCABULARY)} words, ${PAGES} pages of 30 words (ADS_EXPLORATION on, ADS_FREQUENCY_CAP 20, budgets on every ad)`,
  );
  console.table(rows);
  console.log('(wrong: answers without an ad where the locations have ads, or with one where they have none)');
  console.log(
    '(CPU ms/call: the CPU each process used over the run, per call; Redis: every server; "bench" is this process: its client, and a worker that learns)',
  );
  console.log(
    `\nEach master's share of the work on the cluster, ${WIDE} in flight (time in commands from INFO commandstats; CPU of the process)`,
  );
  console.table(
    spread.map((s) => ({
      target: s.name,
      ...Object.fromEntries(cluster.servers.map((m, i) => [`master ${i + 1}: commands`, s.commands[i]])),
      ...Object.fromEntries(cluster.servers.map((m, i) => [`master ${i + 1}: CPU`, s.cpu[i]])),
    })),
  );
  const qps = (name: string) => results[name]!.qps;
  console.log(
    `  service on the cluster / the book on the cluster: ${(qps(SERVICE_CLUSTER) / qps(BOOK_CLUSTER)).toFixed(2)}; service on the cluster / on standalone: ${(qps(SERVICE_CLUSTER) / qps(`service, standalone, ${WIDE} in flight`)).toFixed(2)}`,
  );
  console.log(
    `\n{ me } through the same gateway, ${WIDE} in flight: ${fmt(me.qps)} requests/s, p50 ${ms(me.p50)} ms; CPU ms/call: Redis ${meCpu.redis}, gateway ${meCpu.gateway}, bench ${meCpu.bench}`,
  );
  const graphql = `GraphQL, standalone, ${WIDE} in flight`;
  const empty = `GraphQL, standalone, no ad in the location, ${WIDE} in flight`;
  console.log(
    `  context ({ me } never reaches Redis): GraphQL targetAd / { me } ${(qps(graphql) / me.qps).toFixed(2)}; with no ad in the location ${(qps(empty) / me.qps).toFixed(2)}`,
  );
  console.log(`\nSimulator: ${SIM_ADS} CPC ads, ${fmt(SIM_TARGETINGS)} targetings, clicks drawn from the true rates`);
  console.table(
    [bookRun, ...explorations, exploreRun].map((r) => ({
      pick: r.name,
      'share of the oracle, overall': `${(r.overall * 100).toFixed(1)} %`,
      [`last ${fmt(SIM_WINDOW)}`]: `${(r.windows.at(-1)! * 100).toFixed(1)} %`,
    })),
  );
  console.log(`chart: ${path.relative(ROOT, svg)}`);
  console.log(
    `  exploration's share of the oracle over the last ${fmt(SIM_WINDOW)} targetings ${exploreRun.windows.at(-1)!.toFixed(3)} (docs/ads.md's aim >= 0.95); overall, exploration / the book ${(exploreRun.overall / bookRun.overall).toFixed(2)}`,
  );
  // an aim is met only when every answer of the rows it compares was right
  const aim = (what: string, value: number, names: string[], min: number) => {
    const wrong = names.reduce((sum, name) => sum + results[name]!.wrong, 0);
    const met = value >= min && wrong === 0;
    console.log(
      `  ${what}: ${value.toFixed(2)}  ${met ? 'met' : 'NOT met'}${wrong ? ` (${wrong} wrong answers)` : ''}`,
    );
  };
  console.log('\nAims:');
  const service = `service, standalone, ${WIDE} in flight`;
  const bookWide = `the book (MULTI of set operations), standalone, ${WIDE} in flight`;
  aim(
    `targetings/s at ${WIDE} in flight, service / the book, standalone (aim >= 1.0)`,
    qps(service) / qps(bookWide),
    [service, bookWide],
    1,
  );
  aim(
    `GraphQL targetAd/s / the service's targetings/s at ${WIDE} in flight, standalone (aim >= 0.6)`,
    qps(graphql) / qps(service),
    [graphql, service],
    0.6,
  );
  return 0;
}

await runBench(main);
