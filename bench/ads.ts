/**
 * Ad targeting (`npm run bench:ads`): targetAd through the service and through GraphQL with 10,000 ads over 100
 * locations and 5,000 words, at 1 and 50 in flight, beside the book's target_ads + record_targeting_result (a MULTI
 * of set operations into temporary keys, then its recording) on the same ads in the same run; then a simulator of
 * 100 ads with known click rates, run with the book's pick and with exploration, drawn into
 * docs/ads-simulation.svg. How it measures: docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createRedisClient } from '../src/redis/clients.js';
import type { AdType } from '../src/services/ads/ads.js';
import { wordsOf } from '../src/services/documents/text.js';
import { createServices } from '../src/services/index.js';
import { startWorker } from '../src/worker/start.js';
import { LIMITS_OFF } from '../test/support/limits.js';
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
const BOOK = 'bench-book-ads:';
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
  constructor(private readonly redis: Redis) {}

  async index(ad: BenchAd): Promise<void> {
    const m = this.redis.multi();
    for (const l of ad.locations) m.sadd(`${BOOK}idx:req:${l}`, ad.id);
    const words = [...new Set(wordsOf(ad.content))];
    for (const w of words) m.zadd(`${BOOK}idx:${w}`, 0, ad.id);
    const type = ad.type.toLowerCase();
    const value = ad.type === 'CPM' ? ad.value : (1000 * ad.value * (this.average[type] ?? 1)) / 1000;
    m.hset(`${BOOK}type:`, ad.id, type);
    m.zadd(`${BOOK}idx:ad:value:`, value, ad.id);
    m.zadd(`${BOOK}ad:base_value:`, ad.value, ad.id);
    if (words.length) m.sadd(`${BOOK}terms:${ad.id}`, ...words);
    await m.exec();
  }

  async target(locations: string[], content: string): Promise<string | null> {
    const temporary = () => `${BOOK}idx:${randomUUID()}`;
    const m = this.redis.multi();
    const matched = temporary();
    m.sunionstore(matched, ...locations.map((l) => `${BOOK}idx:req:${l}`)).expire(matched, 300);
    const base = temporary();
    m.zinterstore(base, 2, matched, `${BOOK}idx:ad:value:`, 'WEIGHTS', 0, 1).expire(base, 30);
    const words = [...new Set(wordsOf(content))];
    const bonuses = words.map((w) => {
      const key = temporary();
      m.zinterstore(key, 2, matched, `${BOOK}idx:${w}`, 'WEIGHTS', 0, 1).expire(key, 30);
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
    m.incr(`${BOOK}ads:served:`).zrevrange(targeted, 0, 0);
    const replies = (await m.exec())!;
    const targetId = replies.at(-2)![1] as number;
    const [adId] = replies.at(-1)![1] as string[];
    if (!adId) return null;
    await this.record(targetId, adId, words);
    return adId;
  }

  private async record(targetId: number, adId: string, words: string[]): Promise<void> {
    const terms = new Set(await this.redis.smembers(`${BOOK}terms:${adId}`));
    const matched = words.filter((w) => terms.has(w));
    const type = await this.redis.hget(`${BOOK}type:`, adId);
    const m = this.redis.multi();
    if (matched.length) {
      m.sadd(`${BOOK}terms:matched:${targetId}`, ...matched).expire(`${BOOK}terms:matched:${targetId}`, 900);
    }
    m.incr(`${BOOK}type:${type}:views:`);
    for (const w of matched) m.zincrby(`${BOOK}views:${adId}`, 1, w);
    m.zincrby(`${BOOK}views:${adId}`, 1, '');
    const views = Number((await m.exec())!.at(-1)![1]);
    if (views % 100 === 0) await this.updateCpms(adId);
  }

  private async updateCpms(adId: string): Promise<void> {
    const [[, type], [, baseValue], [, words]] = (await this.redis
      .multi()
      .hget(`${BOOK}type:`, adId)
      .zscore(`${BOOK}ad:base_value:`, adId)
      .smembers(`${BOOK}terms:${adId}`)
      .exec()) as [[null, string], [null, string], [null, string[]]];
    const which = type === 'cpa' ? 'actions' : 'clicks';
    const [typeViews, typeClicks] = await this.redis.mget(`${BOOK}type:${type}:views:`, `${BOOK}type:${type}:${which}`);
    this.average[type] = (1000 * Number(typeClicks ?? '1')) / Number(typeViews ?? '1');
    if (type === 'cpm') return;
    const viewKey = `${BOOK}views:${adId}`;
    const clickKey = `${BOOK}${which}:${adId}`;
    const [adViews, adClicks] = await Promise.all([this.redis.zscore(viewKey, ''), this.redis.zscore(clickKey, '')]);
    let adEcpm: number;
    if (Number(adClicks ?? 0) < 1) adEcpm = Number(await this.redis.zscore(`${BOOK}idx:ad:value:`, adId));
    else {
      adEcpm = (1000 * Number(baseValue) * Number(adClicks)) / Number(adViews ?? 1);
      await this.redis.zadd(`${BOOK}idx:ad:value:`, adEcpm, adId);
    }
    for (const w of words) {
      const [views, clicks] = await Promise.all([this.redis.zscore(viewKey, w), this.redis.zscore(clickKey, w)]);
      if (Number(clicks ?? 0) < 1) continue;
      const wordEcpm = (1000 * Number(baseValue) * Number(clicks)) / Number(views ?? 1);
      await this.redis.zadd(`${BOOK}idx:${w}`, wordEcpm - adEcpm, adId);
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

async function main(): Promise<number> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  const log = createLogger('warn');
  const env = {
    REDIS_URL: server.url,
    KEY_PREFIX: 'bench-ads:',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    METRICS: 'off',
    ADS_EXPLORATION: 'on',
    ...LIMITS_OFF,
  };
  const config = loadConfig(env);
  const client = createRedisClient(config.redis as { kind: 'url'; url: string }, log, 'bench');
  const services = createServices(client, config, log);
  const worker = startWorker({ services, config, log });
  const { ads, pages } = corpus();

  progress(`indexing ${fmt(ads.length)} ads over ${LOCATIONS} locations and ${fmt(VOCABULARY)} words, twice`);
  let n = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = n++; i < ads.length; i = n++) await services.ads.indexAd(ads[i]!);
    }),
  );
  const book = new BookAds(redis);
  for (const ad of ads) await book.index(ad);

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
  /** CPU ms per call of Redis, the gateway and this process (the client, and a worker that learns) over `run`. */
  const pids = { redis: server.child.proc.pid!, gateway: gateway.proc.pid! };
  const withCpu = async (calls: number, run: () => Promise<Timing>) => {
    const before = { redis: cpuSeconds(pids.redis), gateway: cpuSeconds(pids.gateway), bench: process.cpuUsage() };
    const timing = await run();
    const perCall = (seconds: number) => ms((1000 * seconds) / calls);
    const self = process.cpuUsage(before.bench);
    return {
      timing,
      cpu: {
        redis: perCall(cpuSeconds(pids.redis) - before.redis),
        gateway: perCall(cpuSeconds(pids.gateway) - before.gateway),
        bench: perCall((self.user + self.system) / 1e6),
      },
    };
  };
  const TARGET = `query($l: [String!]!, $c: String) { targetAd(locations: $l, content: $c) { targetingId ecpm ad { id } } }`;
  const indexes = pages.map((_p, i) => String(i));
  const page = (q: string) => pages[Number(q)]!;
  let viewer = 0;
  const targets: [string, number, (q: string) => Promise<number>][] = [];
  for (const c of [1, WIDE]) {
    targets.push([
      `service, ${c} in flight`,
      c,
      async (q) =>
        (await services.ads.targetAd({ username: `bench${viewer++ % 1000}`, address: HOST }, page(q))) ? 1 : 0,
    ]);
    const throughGraphQL = (where: (q: string) => string[]) => async (q: string) => {
      const body = JSON.stringify({ query: TARGET, variables: { l: where(q), c: page(q).content } });
      const one = posters[poster++ % posters.length]!;
      return (JSON.parse(await one(body)) as { data: { targetAd: unknown } }).data.targetAd ? 1 : 0;
    };
    targets.push([`GraphQL, ${c} in flight`, c, throughGraphQL((q) => page(q).locations)]);
    // the same request in a location without ads: what GraphQL and the gateway cost without the pick
    if (c === WIDE) targets.push([`GraphQL, no ad in the location, ${c} in flight`, c, throughGraphQL(() => ['none'])]);
    targets.push([
      `the book (MULTI of set operations), ${c} in flight`,
      c,
      async (q) => ((await book.target(page(q).locations, page(q).content)) ? 1 : 0),
    ]);
  }
  const rows: Record<string, string | number>[] = [];
  const results: Record<string, { qps: number; p50: number }> = {};
  for (const [name, c, one] of targets) {
    progress(`targetAd: ${name}`);
    await timed(indexes.slice(0, 100), c, one); // warm-up
    const calls = c === 1 ? indexes : [...indexes, ...indexes, ...indexes]; // each page three times when wide
    const { timing: r, cpu } = await withCpu(calls.length, () => timed(calls, c, one));
    results[name] = r;
    rows.push({
      target: name,
      'p50 ms': ms(r.p50),
      'p99 ms': ms(r.p99),
      'targetings/s': fmt(r.qps),
      served: `${r.matches} of ${calls.length}`,
      'CPU ms/call: Redis': cpu.redis,
      gateway: cpu.gateway,
      bench: cpu.bench,
    });
  }
  const meQueries = Array.from({ length: PAGES * 3 }, () => JSON.stringify({ query: '{ me { id } }' }));
  await timed(meQueries.slice(0, 100), WIDE, async (b) => (await post(b)).length);
  const { timing: me, cpu: meCpu } = await withCpu(meQueries.length, () =>
    timed(meQueries, WIDE, async (b) => (await post(b)).length),
  );
  await worker.stop(5000);
  await services.close();
  client.disconnect();

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
  console.log(
    `{ me } through the same gateway, ${WIDE} in flight: ${fmt(me.qps)} requests/s, p50 ${ms(me.p50)} ms; CPU ms/call: Redis ${meCpu.redis}, gateway ${meCpu.gateway}, bench ${meCpu.bench}`,
  );
  console.log(
    '(CPU ms/call: the CPU each process used over the run, per call; "bench" is this process: its client, and a worker that learns)',
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
  const aim = (what: string, value: number, met: boolean) =>
    console.log(`  ${what}: ${value.toFixed(2)}  ${met ? 'met' : 'NOT met'}`);
  console.log('\nAims:');
  const ratio =
    results[`service, ${WIDE} in flight`]!.qps / results[`the book (MULTI of set operations), ${WIDE} in flight`]!.qps;
  aim(`targetings/s at ${WIDE} in flight, service/book (aim >= 1.0)`, ratio, ratio >= 1);
  const graphqlRatio = results[`GraphQL, ${WIDE} in flight`]!.qps / me.qps;
  aim(`GraphQL targetAd/s / { me } requests/s at ${WIDE} in flight (aim >= 0.6)`, graphqlRatio, graphqlRatio >= 0.6);
  const floor = results[`GraphQL, no ad in the location, ${WIDE} in flight`]!.qps / me.qps;
  console.log(
    `    (the same with no ad in the location: ${floor.toFixed(2)}, what the request costs without the pick)`,
  );
  aim(
    `exploration's share of the oracle over the last ${fmt(SIM_WINDOW)} targetings (aim >= 0.95)`,
    exploreRun.windows.at(-1)!,
    exploreRun.windows.at(-1)! >= 0.95,
  );
  aim(
    "exploration's overall share / the book's (aim > 1)",
    exploreRun.overall / bookRun.overall,
    exploreRun.overall > bookRun.overall,
  );
  return 0;
}

await runBench(main);
