/**
 * What decides who sees an ad, under load: frequency caps and budgets hold exactly with 50 concurrent callers over
 * two gateway processes (this one and a child `npm start`), the only keys with a TTL are the targetings, caps and
 * daily spending (no scratch keys), and exploration lets a close second be seen.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL, prefixMemory, redisEnv, startTestApp, type TestApp } from '../support/app.js';
import { startGateway } from '../support/gateway-process.js';

const INDEX = `mutation($input: AdInput!) { indexAd(input: $input) { id } }`;
const TARGET = `query($l: [String!]!, $c: String) { targetAd(locations: $l, content: $c) { targetingId explored ad { id } } }`;
const CLICK = `mutation($t: ID!, $a: ID!) { recordClick(targetingId: $t, adId: $a) }`;
const AD = `query($id: ID!) { ad(id: $id) { views clicks spent exhausted } }`;

interface Target {
  targetingId: string;
  explored: boolean;
  ad: { id: string };
}

describe('caps and budgets over two processes, 50 callers at once', () => {
  let t: TestApp;
  let urls: [string, string];
  let admin: string;
  beforeAll(async () => {
    const env = { ADS_FREQUENCY_CAP: '3', ADS_EXPLORATION: 'on' };
    t = await startTestApp(env);
    const child = await startGateway({
      ...redisEnv(),
      ...env,
      KEY_PREFIX: t.config.keyPrefix,
      WORKER: 'off',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    urls = [t.url, child.url];
    admin = (await t.signUp('admin')).token;
  });

  const index = async (input: Record<string, unknown>) => {
    const r = await t.gql(INDEX, { input }, admin);
    expect(r.errors).toBeUndefined();
  };
  /** `n` targetings at once, alternating between the two processes. */
  const targetAll = async (n: number, locations: string[], token?: string) =>
    (
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          postGraphQL<{ targetAd: Target | null }>(urls[i % 2]!, TARGET, { l: locations }, token),
        ),
      )
    ).map((r) => {
      if (r.errors) throw new Error(r.text);
      return r.data!.targetAd;
    });
  const adRow = async (id: string) =>
    (await t.gql<{ ad: { views: number; clicks: number; spent: number; exhausted: boolean } }>(AD, { id }, admin)).data!
      .ad;

  it('a viewer sees each ad at most ADS_FREQUENCY_CAP times a day; a capped ad yields to the next', async () => {
    await index({ id: 'cap1', locations: ['Capped'], content: 'a', type: 'CPC', value: 2 });
    await index({ id: 'cap2', locations: ['Capped'], content: 'b', type: 'CPC', value: 1 });
    const viewer = (await t.signUp()).token;
    const served = await targetAll(50, ['Capped'], viewer);
    const count = (id: string) => served.filter((s) => s?.ad.id === id).length;
    expect([count('cap1'), count('cap2'), served.filter((s) => s === null).length]).toEqual([3, 3, 44]);
    // another viewer is not capped by the first one's views
    expect((await targetAll(1, ['Capped']))[0]).not.toBeNull();
  });

  it('a CPM budget stops the ad after the view that spends it; a daily budget the same', async () => {
    // 1000 per 1,000 views: each view costs 1
    await index({ id: 'total', locations: ['Budget'], content: '', type: 'CPM', value: 1000, budget: 1.5 });
    await index({ id: 'daily', locations: ['Daily'], content: '', type: 'CPM', value: 1000, dailyBudget: 0.5 });
    const users = await Promise.all(Array.from({ length: 25 }, () => t.signUp()));
    const byUsers = async (location: string) =>
      (await Promise.all(users.map((u) => targetAll(2, [location], u.token)))).flat();
    expect((await byUsers('Budget')).filter((s) => s !== null)).toHaveLength(2);
    expect(await adRow('total')).toMatchObject({ views: 2, spent: 2, exhausted: true });
    expect((await byUsers('Daily')).filter((s) => s !== null)).toHaveLength(1);
    expect(await adRow('daily')).toMatchObject({ views: 1, spent: 1, exhausted: true });
  });

  it('an ad deleted and indexed again the same day starts with nothing spent today', async () => {
    const ad = { id: 'again', locations: ['Again'], content: '', type: 'CPM', value: 1000, dailyBudget: 0.5 };
    await index(ad);
    const viewer = async () => (await t.signUp()).token;
    expect((await targetAll(1, ['Again'], await viewer()))[0]?.ad.id).toBe('again');
    expect(await targetAll(1, ['Again'], await viewer())).toEqual([null]);
    expect((await t.gql('mutation { deleteAd(id: "again") }', {}, admin)).data).toEqual({ deleteAd: true });
    await index(ad);
    expect(await adRow('again')).toMatchObject({ views: 0, spent: 0, exhausted: false });
    expect((await targetAll(1, ['Again'], await viewer()))[0]?.ad.id).toBe('again');
  });

  it('a CPC budget: every click counts, clicks are charged until it is spent, then it stops serving', async () => {
    await index({ id: 'cpc', locations: ['Clicks'], content: '', type: 'CPC', value: 1, budget: 2.5 });
    const users = await Promise.all(Array.from({ length: 5 }, () => t.signUp()));
    const pages = (await Promise.all(users.map((u) => targetAll(1, ['Clicks'], u.token)))).flat();
    const clicks = await Promise.all(
      pages.map((p, i) => postGraphQL<{ recordClick: boolean }>(urls[i % 2]!, CLICK, { t: p!.targetingId, a: 'cpc' })),
    );
    expect(clicks.map((c) => c.data?.recordClick)).toEqual([true, true, true, true, true]);
    expect(await adRow('cpc')).toMatchObject({ views: 5, clicks: 5, spent: 3, exhausted: true });
    expect(await targetAll(3, ['Clicks'])).toEqual([null, null, null]);
  });

  it('no scratch keys: the only keys with a TTL are targetings (17 min), caps (the day) and daily spending', async () => {
    const { keys } = await prefixMemory(t.redis, `${t.config.keyPrefix}ads:`);
    const withTtl: string[] = [];
    for (const key of keys) {
      const ttl = await t.redis.ttl(key);
      if (ttl === -1) continue;
      withTtl.push(key);
      const family = /:\{ads[^}]*\}:(targetings|seen|daily):/.exec(key)?.[1];
      expect(family, key).toBeDefined();
      const max = { targetings: 1020, seen: 86_400 + 3600, daily: 2 * 86_400 + 3600 }[family!]!;
      expect(ttl, key).toBeLessThanOrEqual(max);
    }
    expect(withTtl.length).toBeGreaterThan(0);
  });

  it('exploration: a close second is seen, and `explored` says when sampling changed the pick', async () => {
    await index({ id: 'first', locations: ['Explore'], content: '', type: 'CPC', value: 1 });
    await index({ id: 'second', locations: ['Explore'], content: '', type: 'CPC', value: 0.9 });
    const served: Target[] = [];
    const users = await Promise.all(Array.from({ length: 34 }, () => t.signUp()));
    for (const u of users) served.push(...((await targetAll(3, ['Explore'], u.token)) as Target[]));
    const second = served.filter((s) => s.ad.id === 'second');
    // each draw favours "second" with a probability near 0.45: fewer than 10 of 102 is about 1e-20
    expect(second.length).toBeGreaterThan(10);
    expect(second.length).toBeLessThan(92);
    expect(second.every((s) => s.explored)).toBe(true);
    expect(served.filter((s) => s.ad.id === 'first').every((s) => !s.explored)).toBe(true);
  });
});
