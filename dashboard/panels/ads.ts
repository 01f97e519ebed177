/**
 * Ads by eCPM (`ads`, admins see their figures): every ad's spending today and in all and exploration's share of the
 * views (`adTotals`); views, clicks, actions, spend (today's and in all) and budgets as a table, and the eCPMs of the
 * best as bars. `ads` pages by id, so the panel ranks the first page of them (ADS_READ).
 */
import { gql } from '../api.js';
import { barChart } from '../chart.js';
import { h, num, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

/** Ads read at most (MAX_QUERY_COST counts each: 200 cost about 3,400 of the default 5,000); the ranking is of these. */
const ADS_READ = 200;
const SHOWN = 10;

interface Ad {
  id: string;
  type: string;
  ecpm: number;
  views: number;
  clicks: number;
  actions: number;
  spent: number;
  spentToday: number;
  budget: number | null;
  dailyBudget: number | null;
  exhausted: boolean;
}

interface Totals {
  spentToday: number;
  spent: number;
  views: number;
  explored: number;
  explorationShare: number | null;
}

/** Amounts with up to 4 decimals: a CPM view costs a thousandth of its value. */
const money = (n: number | null) => (n === null ? '–' : num(n, 4));

export function adsPanel(): PanelSpec {
  return {
    id: 'ads',
    title: 'Ads by eCPM',
    everyMs: 10_000,
    empty: () => 'No ads yet: an admin indexes them with indexAd (README, step 9).',
    async load(body, { width, dispose }) {
      const { ads, adTotals: totals } = await gql<{ ads: Ad[]; adTotals: Totals }>(
        `query DashboardAds { adTotals { spentToday spent views explored explorationShare }
          ads(first: ${ADS_READ}) { id type ecpm views clicks actions spent spentToday budget dailyBudget exhausted } }`,
      );
      if (ads.length === 0) return false;
      body.append(
        table(
          ['spent today', 'spent in all', 'views', 'explored views', "exploration's share"],
          [
            [
              money(totals.spentToday),
              money(totals.spent),
              num(totals.views),
              num(totals.explored),
              totals.explorationShare === null ? '–' : `${num(100 * totals.explorationShare, 1)} %`,
            ],
          ],
          { className: 'ad-totals' },
        ),
      );
      const best = [...ads].sort((a, b) => b.ecpm - a.ecpm || a.id.localeCompare(b.id)).slice(0, SHOWN);
      const chart = h('div', { className: 'chart' });
      body.append(chart);
      const plot = barChart(chart, width, {
        labels: best.map((a) => a.id),
        values: best.map((a) => a.ecpm),
        label: 'eCPM',
        category: 'ad',
      });
      dispose(() => plot.destroy());
      if (ads.length === ADS_READ)
        body.append(h('p', { className: 'note' }, `The best of the first ${ADS_READ} ads by id.`));
      body.append(
        table(
          [
            'ad',
            'type',
            'eCPM',
            'views',
            'clicks',
            'actions',
            'spent',
            'spent today',
            'budget',
            'daily budget',
            'serving',
          ],
          best.map((a) => [
            a.id,
            a.type,
            money(a.ecpm),
            a.views,
            a.clicks,
            a.actions,
            money(a.spent),
            money(a.spentToday),
            money(a.budget),
            money(a.dailyBudget),
            a.exhausted ? 'no: budget spent' : 'yes',
          ]),
          { className: 'ads' },
        ),
      );
      return true;
    },
  };
}
