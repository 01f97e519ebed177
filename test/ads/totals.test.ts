/**
 * adTotals: what every ad spent today and in all, and exploration's share of their views, for admins: the views
 * exploration picked are exactly the targetings that said `explored` (one shard serving, or a commit over several on
 * a cluster), and the spending is the sum of the ads' own (`spentToday`, `spent`).
 */
import { describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.js';

const INDEX = `mutation($input: AdInput!) { indexAd(input: $input) { id } }`;
const TARGET = `query($l: [String!]!) { targetAd(locations: $l) { explored ad { id } } }`;
const TOTALS = `{ adTotals { spentToday spent views explored explorationShare } }`;

describe('adTotals', () => {
  it('sums the ads’ spending and counts the views exploration picked', async () => {
    const t = await startTestApp({ ADS_FREQUENCY_CAP: '0', ADS_EXPLORATION: 'on' });
    const admin = (await t.signUp('admin')).token;
    const user = (await t.signUp()).token;
    expect((await t.gql(TOTALS, {}, admin)).data).toEqual({
      adTotals: { spentToday: 0, spent: 0, views: 0, explored: 0, explorationShare: null },
    });
    for (const input of [
      { id: 'first', locations: ['Explore'], content: '', type: 'CPC', value: 1 },
      { id: 'second', locations: ['Explore'], content: '', type: 'CPC', value: 0.9 },
      { id: 'banner', locations: ['Banner'], content: '', type: 'CPM', value: 5, dailyBudget: 100 },
    ])
      expect((await t.gql(INDEX, { input }, admin)).errors).toBeUndefined();
    let explored = 0;
    for (let i = 0; i < 60; i++) {
      const r = await t.gql<{ targetAd: { explored: boolean; ad: { id: string } } }>(TARGET, { l: ['Explore'] });
      if (r.data!.targetAd.explored) explored++;
    }
    for (let i = 0; i < 4; i++) expect((await t.gql(TARGET, { l: ['Banner'] })).data?.targetAd).not.toBeNull();
    // each draw favours "second" with a probability near 0.45: none explored in 60 is about 1e-16
    expect(explored).toBeGreaterThan(0);

    const refused = await t.gql(TOTALS, {}, user);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const totals = (
      await t.gql<{
        adTotals: { spentToday: number; spent: number; views: number; explored: number; explorationShare: number };
      }>(TOTALS, {}, admin)
    ).data!.adTotals;
    expect(totals.views).toBe(64);
    expect(totals.explored).toBe(explored);
    expect(totals.explorationShare).toBeCloseTo(explored / 64, 12);
    expect(totals.spentToday).toBeCloseTo((4 * 5) / 1000, 12);
    expect(totals.spent).toBeCloseTo((4 * 5) / 1000, 12);
    const { ads } = (
      await t.gql<{ ads: { spentToday: number; spent: number }[] }>('{ ads { spentToday spent } }', {}, admin)
    ).data!;
    expect(totals.spentToday).toBeCloseTo(
      ads.reduce((n, a) => n + a.spentToday, 0),
      12,
    );
    expect(totals.spent).toBeCloseTo(
      ads.reduce((n, a) => n + a.spent, 0),
      12,
    );
  });
});
