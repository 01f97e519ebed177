/**
 * Ads over shards (docs/ads.md "Keys" and "A targeting over shards"): on the three-master cluster every master holds
 * a shard and does a share of the targeting work; a targeting's steps (a pick in each shard, then a commit in one)
 * leave nothing written between them, a commit that a race refused writes nothing, a gateway killed while its
 * targetings wait on paused masters leaves every cap, budget and count exact, and ads placed in another number of
 * shards are refused rather than looked for in the wrong ones.
 */
import type { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { adCommands } from '../../src/redis/ads/commands.js';
import { adKeys, adShardTag } from '../../src/redis/ads/keys.js';
import { keyspace } from '../../src/redis/keys.js';
import { isRefused } from '../../src/redis/status.js';
import { postGraphQL, prefixMemory, redisEnv, startTestApp, type TestApp } from '../support/app.js';
import { startGateway } from '../support/gateway-process.js';

const INDEX = `mutation($input: AdInput!) { indexAd(input: $input) { id } }`;
const TARGET = `query($l: [String!]!, $c: String) { targetAd(locations: $l, content: $c) { ad { id } } }`;

async function withAdmin(env: Record<string, string>) {
  const t = await startTestApp(env);
  const admin = (await t.signUp('admin')).token;
  const index = async (input: Record<string, unknown>) => {
    const r = await t.gql(INDEX, { input }, admin);
    expect(r.errors).toBeUndefined();
  };
  return { t, index };
}

/** The servers: a cluster's masters, or the standalone server. */
const servers = (t: TestApp): Redis[] => ('nodes' in t.redis ? t.redis.nodes('master') : [t.redis]);

/** Microseconds a server spent in scripts so far (INFO commandstats of EVALSHA and EVAL). */
async function scriptUsec(server: Redis): Promise<number> {
  const info = await server.info('commandstats');
  return [...info.matchAll(/^cmdstat_eval(?:sha)?:calls=\d+,usec=(\d+),/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** Every key of the prefix's ads with its value (DUMP), to compare what a step wrote. */
async function adsState(t: TestApp): Promise<Record<string, string>> {
  const { keys } = await prefixMemory(t.redis, `${t.config.keyPrefix}ads:`);
  const dumps = await Promise.all(keys.map(async (k) => [k, (await t.redis.dumpBuffer(k))?.toString('hex')] as const));
  return Object.fromEntries(dumps.sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe.runIf(inject('redis').kind === 'cluster')('ads on the three-master cluster', () => {
  it('the shards sit on the three masters, and each master does a share of the targeting work', async () => {
    const { t, index } = await withAdmin({ ADS_EXPLORATION: 'on', ADS_FREQUENCY_CAP: '0', RATE_LIMIT_PER_MINUTE: '0' });
    expect(t.app.services.ads.shards.map((s) => s.adQueue)).toEqual([0, 1, 2].map(adShardTag));
    for (let i = 0; i < 90; i++)
      await index({
        id: `share${i}`,
        locations: ['Share'],
        content: 'red green blue',
        type: 'CPC',
        value: 1 + i / 100,
      });
    const masters = servers(t);
    expect(masters).toHaveLength(3);
    // every master holds a shard's ads for the location
    for (const master of masters) {
      const [, found] = await master.scan(
        '0',
        'MATCH',
        `${t.config.keyPrefix}ads:{*}:location:Share`,
        'COUNT',
        100_000,
      );
      expect(found, `${master.options.port}`).toHaveLength(1);
    }
    const before = await Promise.all(masters.map(scriptUsec));
    for (let round = 0; round < 20; round++)
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          const r = await t.gql<{ targetAd: { ad: { id: string } } }>(TARGET, { l: ['Share'], c: 'green page' });
          expect(r.data?.targetAd.ad.id).toMatch(/^share\d+$/);
        }),
      );
    const work = (await Promise.all(masters.map(scriptUsec))).map((usec, i) => usec - before[i]!);
    const total = work.reduce((x, y) => x + y);
    const shares = work.map((w) => w / total);
    // a third each, give or take what other test files run on the same masters meanwhile
    expect(Math.min(...shares), `script time by master: ${shares.map((s) => s.toFixed(2)).join(', ')}`).toBeGreaterThan(
      0.15,
    );
  });
});

/** ADS_SHARDS=3 on both projects: a standalone Redis runs the targeting in steps too. */
const SHARDS = { ADS_SHARDS: '3' };

describe('a targeting in steps', () => {
  it('a pick writes nothing, and a commit refused because another caller took the cap writes nothing', async () => {
    const { t, index } = await withAdmin({ ...SHARDS, ADS_EXPLORATION: 'off', ADS_FREQUENCY_CAP: '1' });
    await index({ id: 'step1', locations: ['Steps'], content: '', type: 'CPM', value: 2000 });
    await index({ id: 'step2', locations: ['Steps'], content: '', type: 'CPM', value: 1000 });
    const commands = adCommands(t.redis, keyspace(t.config.keyPrefix));
    const viewer = { username: 'stepper', address: '127.0.0.1' };
    const now = Date.now();
    const args = {
      day: Math.floor(now / 86_400_000),
      minute: Math.floor(now / 60_000),
      nonce: 'AAAAAAAAAAAAAAAA',
      viewer: 'u:stepper',
      locations: ['Steps'],
      words: [],
      cap: 1,
      explore: false,
      seed: 1,
      task: '{}',
    };
    const before = await adsState(t);
    const { shards } = t.app.services.ads;
    const picks = await Promise.all(shards.map((shard) => commands.pickAd({ ...args, shard })));
    // a gateway that dies after its picks leaves nothing
    expect(await adsState(t)).toEqual(before);
    const at = picks.findIndex((p) => p !== null && !isRefused(p) && p.choice.adId === 'step1');
    expect(at).toBeGreaterThanOrEqual(0);
    // meanwhile another targeting for the same viewer takes step1's cap
    expect((await t.app.services.ads.targetAd(viewer, { locations: ['Steps'] }))?.adId).toBe('step1');
    const taken = await adsState(t);
    expect(await commands.commitAd({ ...args, shard: shards[at]!, adId: 'step1' })).toBeNull();
    expect(await adsState(t)).toEqual(taken);
    // a targeting whose commit is refused picks again: the next ad, then none
    expect((await t.app.services.ads.targetAd(viewer, { locations: ['Steps'] }))?.adId).toBe('step2');
    expect(await t.app.services.ads.targetAd(viewer, { locations: ['Steps'] })).toBeNull();
  });

  it('exploration across shards: a close second in another shard is seen, and `explored` says so', async () => {
    const { t, index } = await withAdmin({ ...SHARDS, ADS_EXPLORATION: 'on', ADS_FREQUENCY_CAP: '0' });
    // on the cluster "best" is in the third shard, "close" in the first
    await index({ id: 'best', locations: ['Across'], content: '', type: 'CPC', value: 1 });
    await index({ id: 'close', locations: ['Across'], content: '', type: 'CPC', value: 0.9 });
    const ads = t.app.services.ads;
    expect(ads.shardOf('best')).not.toBe(ads.shardOf('close'));
    const served = [];
    for (let i = 0; i < 100; i++)
      served.push((await ads.targetAd({ username: `across${i}`, address: '127.0.0.1' }, { locations: ['Across'] }))!);
    const close = served.filter((s) => s.adId === 'close');
    // each draw favours "close" with a probability near 0.45: fewer than 10 of 100 is about 1e-20
    expect(close.length).toBeGreaterThan(10);
    expect(close.length).toBeLessThan(90);
    expect(close.every((s) => s.explored)).toBe(true);
    expect(served.filter((s) => s.adId === 'best').every((s) => !s.explored)).toBe(true);
  });

  it('a process refuses ads placed in another number of shards (a standalone dataset moved to a cluster)', async () => {
    const t = await startTestApp();
    await t.redis.set(adKeys(keyspace(t.config.keyPrefix)).adShardCount, 7);
    const viewer = { username: null, address: '127.0.0.1' };
    const shards = t.app.services.ads.shards.length;
    const refusal = `the ads were placed in 7 shards, this process has ${shards}`;
    await expect(t.app.services.ads.targetAd(viewer, { locations: ['Moved'] })).rejects.toThrow(refusal);
    await expect(t.app.services.ads.list({ first: 1 })).rejects.toThrow(refusal);
  });

  it('a gateway killed while its targetings wait on paused servers leaves caps, budgets and counts exact', async () => {
    const env = { ...SHARDS, ADS_EXPLORATION: 'on', ADS_FREQUENCY_CAP: '2', RATE_LIMIT_PER_MINUTE: '0' };
    const { t, index } = await withAdmin(env);
    const ids = Array.from({ length: 6 }, (_, i) => `killed${i}`);
    // CPM at 1000 per 1,000 views: a view costs 1, so a budget of 5 is 5 views
    for (const id of ids) await index({ id, locations: ['Killed'], content: '', type: 'CPM', value: 1000, budget: 5 });
    const child = await startGateway({ ...redisEnv(), ...env, KEY_PREFIX: t.config.keyPrefix, WORKER: 'off' });
    const users = await Promise.all(Array.from({ length: 8 }, () => t.signUp()));
    const target = (url: string, token: string) => postGraphQL(url, TARGET, { l: ['Killed'] }, token);
    // the child's targetings stop at the servers' pause (some picked, some not), and the child dies there
    await Promise.all(servers(t).map((s) => s.call('CLIENT', 'PAUSE', '700', 'WRITE')));
    const lost = users
      .flatMap((u) => [target(child.url, u.token), target(child.url, u.token)])
      .map((p) => p.catch(() => null));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.child.kill('SIGKILL');
    await child.exited;
    await Promise.all(lost);
    await Promise.all(servers(t).map((s) => s.call('CLIENT', 'UNPAUSE')));
    // then 50 callers in this process serve what is left
    await Promise.all(Array.from({ length: 50 }, (_, i) => target(t.url, users[i % users.length]!.token)));
    const ads = await t.app.services.ads.ads({ ids });
    const day = Math.floor(Date.now() / 86_400_000);
    const seen = await Promise.all(
      ids.map(async (id) => {
        const shard = t.app.services.ads.shardOf(id);
        const counts = await Promise.all(
          users.map(async (u) => Number((await t.redis.hget(shard.seen(day, `u:${u.username}`), id)) ?? 0)),
        );
        return counts;
      }),
    );
    ads.forEach((ad, i) => {
      expect(ad!.spent, ad!.id).toBeLessThanOrEqual(5);
      expect(ad!.spent, ad!.id).toBe(ad!.views); // every recorded view was charged whole
      expect(Math.max(...seen[i]!), ad!.id).toBeLessThanOrEqual(2);
      expect(
        seen[i]!.reduce((x, y) => x + y),
        ad!.id,
      ).toBe(ad!.views); // and counted against its viewer's cap
    });
    // 8 viewers × 2 views of each of 6 ads could be 96, the budgets allow 30: every budget is spent
    expect(ads.map((ad) => ad!.spent)).toEqual(ids.map(() => 5));
  });
});
