/**
 * Ads through GraphQL: the book's test_index_and_target_ads with its exact values, learning that moves word
 * bonuses, clicks and actions that count once, the counts exploration samples from, ads beside documents on the same
 * words, who may do what, bad input.
 * Learning runs in a worker, as in production.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { pairs } from '../../src/redis/replies.js';
import { startWorker } from '../../src/worker/start.js';
import { eventually, postGraphQL, prefixMemory, startTestApp } from '../support/app.js';

const CONTENT = 'this is some random content, look at how it is indexed.';
const INDEX = `mutation($input: AdInput!) { indexAd(input: $input) { id type value ecpm locations terms } }`;
const TARGET = `query($l: [String!]!, $c: String) {
  targetAd(locations: $l, content: $c) { targetingId ecpm matchedTerms explored ad { id } }
}`;
const CLICK = `mutation($t: ID!, $a: ID!, $action: Boolean) { recordClick(targetingId: $t, adId: $a, action: $action) }`;
const ADS = '{ ads { id ecpm views clicks actions spent exhausted } }';
const FAST_WORKER = { WORKER_HEARTBEAT_MS: '100', WORKER_TIMEOUT_MS: '1000', QUEUE_POLL_MS: '20' };

interface Target {
  targetingId: string;
  ecpm: number;
  matchedTerms: string[];
  explored: boolean;
  ad: { id: string };
}
interface AdRow {
  id: string;
  ecpm: number;
  views: number;
  clicks: number;
  actions: number;
  spent: number;
  exhausted: boolean;
}
const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

/** An app with a worker (learning) and an admin. */
async function adsApp(env: Record<string, string> = {}) {
  const t = await startTestApp({ ...FAST_WORKER, ...env });
  const worker = startWorker({ services: t.app.services, config: t.config, log: createLogger('silent') });
  const admin = (await t.signUp('admin')).token;
  const index = async (input: Record<string, unknown>) => {
    const r = await t.gql<{ indexAd: { id: string; ecpm: number; terms: string[] } }>(INDEX, { input }, admin);
    if (!r.data?.indexAd) throw new Error(r.text);
    return r.data.indexAd;
  };
  const target = async (locations: string[], content?: string, token?: string): Promise<Target | null> => {
    const r = await t.gql<{ targetAd: Target | null }>(TARGET, { l: locations, c: content }, token);
    if (r.errors) throw new Error(r.text);
    return r.data!.targetAd;
  };
  const click = async (targetingId: string, adId: string, action = false): Promise<boolean> => {
    const r = await t.gql<{ recordClick: boolean }>(CLICK, { t: targetingId, a: adId, action });
    if (r.errors) throw new Error(r.text);
    return r.data!.recordClick;
  };
  const ads = async (): Promise<Record<string, AdRow>> => {
    const r = await t.gql<{ ads: AdRow[] }>(ADS, {}, admin);
    if (!r.data) throw new Error(r.text);
    return Object.fromEntries(r.data.ads.map((a) => [a.id, a]));
  };
  return { t, worker, admin, index, target, click, ads };
}
type AdsApp = Awaited<ReturnType<typeof adsApp>>;

describe("the book's test_index_and_target_ads (ADS_EXPLORATION=off)", () => {
  let a: AdsApp;
  beforeAll(async () => {
    a = await adsApp({ ADS_EXPLORATION: 'off', ADS_FREQUENCY_CAP: '0' });
  });
  afterAll(() => a.worker.stop(1000));

  it('targets, records and learns with the exact values', async () => {
    await a.index({ id: '1', locations: ['USA', 'CA'], content: CONTENT, type: 'CPC', value: 0.25 });
    await a.index({ id: '2', locations: ['USA', 'VA'], content: `${CONTENT} wooooo`, type: 'CPC', value: 0.125 });
    let last: Target | null = null;
    for (let i = 0; i < 100; i++) last = await a.target(['USA'], CONTENT);
    expect(last!.ad.id).toBe('1');
    expect(last!.explored).toBe(false);
    expect(last!.matchedTerms.sort()).toEqual(['content', 'indexed', 'look', 'random']);

    const va = await a.target(['VA'], 'wooooo');
    expect(va!.ad.id).toBe('2');
    expect(va!.matchedTerms).toEqual(['wooooo']);

    // the 100th view of ad 1 had it learned: no click yet, so its eCPM stays
    const { shards } = a.t.app.services.ads;
    const queued = async () =>
      (await Promise.all(shards.map((s) => a.t.redis.llen(s.queueReady)))).reduce((x, y) => x + y);
    expect(await eventually(async () => (await queued()) === 0)).toBe(true);
    let ads = await a.ads();
    expect([ads['1']!.ecpm, ads['2']!.ecpm]).toEqual([0.25, 0.125]);
    expect([ads['1']!.views, ads['2']!.views]).toEqual([100, 1]);

    expect(await a.click(last!.targetingId, '1')).toBe(true);
    expect(await eventually(async () => (await a.ads())['1']!.ecpm === 2.5)).toBe(true);
    ads = await a.ads();
    expect(ads['1']).toMatchObject({ ecpm: 2.5, views: 100, clicks: 1, spent: 0.25 });
    expect(ads['2']!.ecpm).toBe(0.125);
  });
});

describe('learning', () => {
  let a: AdsApp;
  beforeAll(async () => {
    a = await adsApp({ ADS_EXPLORATION: 'off', ADS_FREQUENCY_CAP: '0' });
  });
  afterAll(() => a.worker.stop(1000));

  it("a word whose pages earn clicks raises the ad's eCPM on pages having it, and wins it those pages", async () => {
    await a.index({ id: 'A', locations: ['L'], content: 'alpha beta', type: 'CPC', value: 1 });
    const alphaPages: Target[] = [];
    for (let i = 0; i < 50; i++) {
      alphaPages.push((await a.target(['L'], 'page about alpha'))!);
      await a.target(['L'], 'page about beta');
    }
    for (const page of alphaPages.slice(0, 5)) expect(await a.click(page.targetingId, 'A')).toBe(true);
    // ad: 1000 * 1 * 5 / 100 = 50; alpha: 1000 * 1 * 5 / 50 = 100, a bonus of 50; beta: no click, no bonus
    expect(await eventually(async () => (await a.ads())['A']!.ecpm === 50)).toBe(true);
    expect(await eventually(async () => (await a.target(['L'], 'alpha'))!.ecpm === 100)).toBe(true);
    expect((await a.target(['L'], 'beta'))!.ecpm).toBe(50);
    expect((await a.target(['L'], 'alpha beta'))!.ecpm).toBe(50 + 0.5 * 0 + 0.5 * 50);

    // a CPM ad worth 75 now loses pages about alpha and wins the others
    await a.index({ id: 'B', locations: ['L'], content: 'gamma', type: 'CPM', value: 75 });
    expect((await a.target(['L'], 'alpha'))!.ad.id).toBe('A');
    expect((await a.target(['L'], 'beta'))!.ad.id).toBe('B');
    expect((await a.target(['L']))!.ad.id).toBe('B');
  });

  it('a CPA action is an action, never a click; each counts once per targeting and is charged once', async () => {
    await a.index({ id: 'cpa', locations: ['CPA-land'], content: 'shoes', type: 'CPA', value: 2 });
    const page = (await a.target(['CPA-land'], 'shoes'))!;
    expect(await a.click(page.targetingId, 'cpa', true)).toBe(true);
    expect(await a.click(page.targetingId, 'cpa', true)).toBe(false);
    expect(await a.click(page.targetingId, 'cpa')).toBe(true);
    expect(await a.click(page.targetingId, 'cpa')).toBe(false);
    const row = (await a.ads())['cpa']!;
    expect(row).toMatchObject({ views: 1, clicks: 1, actions: 1, spent: 2 });
    // learned from actions: 1000 * 2 * 1 / 1
    expect(await eventually(async () => (await a.ads())['cpa']!.ecpm === 2000)).toBe(true);
  });

  it('a click counts once; unknown, malformed, mismatched and expired targetings are false', async () => {
    await a.index({ id: 'once', locations: ['Once'], content: 'x', type: 'CPC', value: 1 });
    const page = (await a.target(['Once']))!;
    expect(await a.click(page.targetingId, 'A')).toBe(false); // another ad
    const other = page.targetingId.endsWith('A') ? 'B' : 'A';
    expect(await a.click(`${page.targetingId.slice(0, -1)}${other}`, 'once')).toBe(false); // an unknown one
    expect(await a.click('not a targeting id', 'once')).toBe(false);
    expect(await a.click(page.targetingId, 'once')).toBe(true);
    expect(await a.click(page.targetingId, 'once')).toBe(false);
    expect((await a.ads())['once']!.clicks).toBe(1);

    // a targeting 16 minutes old (its record rewritten so: Redis's clock is left alone)
    const old = (await a.target(['Once']))!;
    const [minute, nonce] = old.targetingId.split('.') as [string, string];
    const bucket = a.t.app.services.ads.shardOf('once').targetings(parseInt(minute, 36));
    const [ad, at, ...words] = (await a.t.redis.hget(bucket, nonce))!.split(' ');
    await a.t.redis.hset(bucket, nonce, [ad, Number(at) - 16 * 60_000, ...words].join(' '));
    expect(await a.click(old.targetingId, 'once')).toBe(false);
    expect((await a.ads())['once']!.clicks).toBe(1);
  });
});

describe('the pick', () => {
  it("equals the book's arithmetic done in full, after learning has given ads many different bonuses", async () => {
    // exploration spreads views and clicks over every ad while they learn; the pick is then checked without it
    const a = await adsApp({ ADS_EXPLORATION: 'on', ADS_FREQUENCY_CAP: '0' });
    const checker = await startTestApp({
      KEY_PREFIX: a.t.config.keyPrefix,
      ADS_EXPLORATION: 'off',
      ADS_FREQUENCY_CAP: '0',
    });
    let seed = 5;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const vocabulary = ['red', 'green', 'blue', 'cyan', 'pink', 'gold'];
    const some = (n: number) => vocabulary.filter(() => random() < n / vocabulary.length).join(' ');
    // every ad has every word; pages about ad i's favourite word, vocabulary[i], earn it far more clicks
    for (let i = 0; i < vocabulary.length; i++)
      await a.index({ id: `p${i}`, locations: ['Pick'], content: vocabulary.join(' '), type: 'CPC', value: 1 });
    for (let i = 0; i < 900; i++) {
      const page = (await a.target(['Pick'], some(1.5)))!;
      const favourite = vocabulary[Number(page.ad.id.slice(1))]!;
      if (random() < (page.matchedTerms.includes(favourite) ? 0.3 : 0.03)) await a.click(page.targetingId, page.ad.id);
    }
    await a.worker.stop(1000); // what follows reads bonuses that no learning changes any more
    const ads = a.t.app.services.ads;
    const ecpm = Object.fromEntries(
      (await Promise.all(ads.shards.map((s) => a.t.redis.zrange(s.ecpm, '0', '-1', 'WITHSCORES')))).flatMap(pairs),
    );
    const distinctBonuses = new Set<number>();
    for (let i = 0; i < 60; i++) {
      const words = [...new Set(some(3).split(' ').filter(Boolean))];
      const expected = await Promise.all(
        Object.keys(ecpm).map(async (id) => {
          const bonuses = (await Promise.all(words.map((w) => a.t.redis.zscore(ads.shardOf(id).word(w), id))))
            .filter((b) => b !== null)
            .map(Number);
          bonuses.forEach((b) => distinctBonuses.add(b));
          const score = bonuses.length
            ? ecpm[id]! + 0.5 * Math.min(...bonuses) + 0.5 * Math.max(...bonuses)
            : ecpm[id]!;
          return { id, score };
        }),
      );
      expected.sort((x, y) => y.score - x.score || (x.id < y.id ? 1 : -1));
      const r = await checker.gql<{ targetAd: Target }>(TARGET, { l: ['Pick'], c: words.join(' ') });
      const page = r.data!.targetAd;
      expect({ id: page.ad.id, ecpm: page.ecpm }, words.join(' ')).toEqual({
        id: expected[0]!.id,
        ecpm: expected[0]!.score,
      });
    }
    expect(distinctBonuses.size).toBeGreaterThan(10);
  });
});

describe('ties', () => {
  it("go to the greater id in byte order, as the book's ZREVRANGE, whatever the server's locale", async () => {
    const a = await adsApp({ ADS_EXPLORATION: 'off', ADS_FREQUENCY_CAP: '0' });
    for (const id of ['Zed', 'alpha', 'Alpha'])
      await a.index({ id, locations: ['Tie'], content: 'same words', type: 'CPM', value: 2 });
    expect((await a.target(['Tie'], 'same'))!.ad.id).toBe('alpha');
    await a.index({ id: 'alphabet', locations: ['Tie'], content: 'same words', type: 'CPM', value: 2 });
    expect((await a.target(['Tie'], 'same'))!.ad.id).toBe('alphabet');
    await a.worker.stop(1000);
  });
});

describe('ads beside documents, and what an ad is made of', () => {
  let a: AdsApp;
  beforeAll(async () => {
    a = await adsApp({ ADS_FREQUENCY_CAP: '0' });
  });
  afterAll(() => a.worker.stop(1000));

  it("exploration's counts: a view is written on the ad's cards in the page's locations, learning writes all", async () => {
    await a.index({ id: 'counted', locations: ['CountedA', 'CountedB'], content: '', type: 'CPC', value: 1 });
    const { location } = a.t.app.services.ads.shardOf('counted');
    // a card is the ad's type (3 bytes), then its value, eCPM, bonus range, events and views, as doubles
    const counts = async (l: string) => {
      const card = (await a.t.redis.hgetBuffer(location(l), 'counted'))!;
      return { events: card.readDoubleLE(35), views: card.readDoubleLE(43) };
    };
    const pages = [await a.target(['CountedA']), await a.target(['CountedA']), await a.target(['CountedA'])];
    expect(pages.map((p) => p!.ad.id)).toEqual(['counted', 'counted', 'counted']);
    expect(await counts('CountedA')).toEqual({ events: 0, views: 3 });
    expect(await counts('CountedB')).toEqual({ events: 0, views: 0 });
    // a click makes the ad due to be learned, and learning writes its counts on every card
    expect(await a.click(pages[0]!.targetingId, 'counted')).toBe(true);
    expect(await eventually(async () => (await counts('CountedB')).events === 1)).toBe(true);
    expect(await counts('CountedB')).toEqual({ events: 1, views: 3 });
    expect(await counts('CountedA')).toEqual({ events: 1, views: 3 });
    // a page in both of its locations writes both cards
    expect((await a.target(['CountedB', 'CountedA']))!.ad.id).toBe('counted');
    expect([await counts('CountedA'), await counts('CountedB')]).toEqual([
      { events: 1, views: 4 },
      { events: 1, views: 4 },
    ]);
  });

  it('ads and documents indexed on the same words break neither', async () => {
    const doc = await a.t.gql<{ indexDocument: { id: string } }>(
      'mutation { indexDocument(id: "d", title: "random", content: "random content indexed") { id } }',
      {},
      a.admin,
    );
    expect(doc.errors).toBeUndefined();
    await a.index({ id: 'ad', locations: ['Here'], content: 'random content indexed', type: 'CPC', value: 1 });
    const search = await a.t.gql<{ searchDocuments: { documents: { id: string }[] } }>(
      '{ searchDocuments(query: "random content") { documents { id } } }',
      {},
      a.admin,
    );
    expect(search.data?.searchDocuments.documents).toEqual([{ id: 'd' }]);
    expect((await a.target(['Here'], 'random content'))!.matchedTerms.sort()).toEqual(['content', 'random']);
  });

  it('an ad with only stop words indexes and serves; replacing it keeps what it learned', async () => {
    const ad = await a.index({ id: 'stop', locations: ['Nowhere'], content: 'the and of it', type: 'CPM', value: 3 });
    expect(ad.terms).toEqual([]);
    const page = (await a.target(['Nowhere'], 'the page'))!;
    expect(page.ad.id).toBe('stop');
    expect(page.ecpm).toBe(3);
    await a.click(page.targetingId, 'stop');
    const replaced = await a.index({ id: 'stop', locations: ['Elsewhere'], content: 'shoes', type: 'CPM', value: 4 });
    expect(replaced.terms).toEqual(['shoes']);
    expect(await a.target(['Nowhere'])).toBeNull();
    expect((await a.target(['Elsewhere'], 'shoes'))!.matchedTerms).toEqual(['shoes']);
    expect((await a.ads())['stop']).toMatchObject({ views: 2, clicks: 1, ecpm: 4 });
    // a location it keeps serves it at its new value (its card there is rewritten)
    await a.index({ id: 'stop', locations: ['Elsewhere'], content: 'shoes', type: 'CPM', value: 5 });
    expect((await a.target(['Elsewhere'], 'shoes'))!.ecpm).toBe(5);
    expect((await a.t.gql('mutation { deleteAd(id: "stop") }', {}, a.admin)).data).toEqual({ deleteAd: true });
    expect((await a.t.gql('mutation { deleteAd(id: "stop") }', {}, a.admin)).data).toEqual({ deleteAd: false });
    expect(await a.target(['Elsewhere'], 'shoes')).toBeNull();
    const left = (await prefixMemory(a.t.redis, `${a.t.config.keyPrefix}ads:`)).keys;
    expect(left.filter((k) => /:(meta|location|word):/.test(k) && /stop|Elsewhere|Nowhere|shoes/.test(k))).toEqual([]);
  });

  it('anyone targets and clicks; only admins index, delete, list and see what ads earn', async () => {
    const user = (await a.t.signUp()).token;
    await a.index({ id: 'public', locations: ['Public'], content: 'words', type: 'CPC', value: 1 });
    const anonymous = await postGraphQL(a.t.url, TARGET, { l: ['Public'] });
    expect(anonymous.errors).toBeUndefined();
    const input = { id: 'x', locations: ['L'], content: '', type: 'CPC', value: 1 };
    for (const token of [undefined, user]) {
      const expected = token ? 'FORBIDDEN' : 'UNAUTHENTICATED';
      expect(codeOf(await a.t.gql(INDEX, { input }, token))).toBe(expected);
      expect(codeOf(await a.t.gql('mutation { deleteAd(id: "public") }', {}, token))).toBe(expected);
      expect(codeOf(await a.t.gql('{ ads { id } }', {}, token))).toBe(expected);
      expect(codeOf(await a.t.gql('{ ad(id: "public") { id } }', {}, token))).toBe(expected);
      const money = await a.t.gql('{ targetAd(locations: ["Public"]) { ad { id spent } } }', {}, token);
      expect(codeOf(money)).toBe(expected);
      if (token) {
        // the admin scope's refusals say which: a root field, or an admin-only field of an object
        expect((await a.t.gql('{ ads { id } }', {}, token)).errors?.[0]?.message).toBe('only an admin may do this');
        expect(money.errors?.[0]?.message).toBe('only an admin may see this field');
      }
    }
    const r = await a.t.gql<{ targetAd: { ad: { id: string; terms: string[] } } }>(
      '{ targetAd(locations: ["Public"]) { ad { id terms } } }',
      {},
      user,
    );
    expect(r.data?.targetAd.ad).toEqual({ id: 'public', terms: ['words'] });
  });

  it('bad input is BAD_USER_INPUT naming the argument, and writes nothing', async () => {
    const good = { id: 'bad', locations: ['L'], content: 'fine', type: 'CPC', value: 1 };
    const cases: [Record<string, unknown>, string][] = [
      [{ value: 0 }, 'input.value'],
      [{ value: -1 }, 'input.value'],
      [{ budget: -5 }, 'input.budget'],
      [{ value: 1e13 }, 'input.value'],
      [{ dailyBudget: 0 }, 'input.dailyBudget'],
      [{ locations: [] }, 'input.locations'],
      [{ locations: [''] }, 'input.locations'],
      [{ locations: ['  '] }, 'input.locations'],
      [{ locations: Array.from({ length: 33 }, (_, i) => `l${i}`) }, 'input.locations'],
      [{ locations: ['x'.repeat(65)] }, 'input.locations'],
      [{ content: 'y'.repeat(10_001) }, 'input.content'],
      [{ id: 'no spaces' }, 'input.id'],
    ];
    for (const [change, argument] of cases) {
      const r = await a.t.gql(INDEX, { input: { ...good, ...change } }, a.admin);
      expect(codeOf(r), argument).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.extensions?.argument, JSON.stringify(change)).toBe(argument);
    }
    await a.index({ ...good, id: 'served', locations: ['L'] });
    for (const [variables, argument] of [
      [{ l: [] }, 'locations'],
      [{ l: ['x'.repeat(65)] }, 'locations'],
      [{ l: ['L'], c: 'z'.repeat(10_001) }, 'content'],
    ] as const) {
      const r = await a.t.gql(TARGET, variables);
      expect(codeOf(r), argument).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.extensions?.argument).toBe(argument);
    }
    expect((await a.ads())['served']!.views).toBe(0);
    expect(codeOf(await a.t.gql('{ ads(first: 501) { id } }', {}, a.admin))).toBe('BAD_USER_INPUT');
    for (const [query, argument] of [
      ['{ ad(id: "no spaces") { id } }', 'id'],
      ['{ ads(after: "no spaces") { id } }', 'after'],
      ['mutation { deleteAd(id: "no spaces") }', 'id'],
    ] as const) {
      const r = await a.t.gql(query, {}, a.admin);
      expect(codeOf(r), query).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.extensions?.argument, query).toBe(argument);
    }
    expect((await a.ads())['bad']).toBeUndefined();
  });
});
