/** Visits of one day by country, region or city (`dailyVisits`, from uploaded access logs) as a bar chart. */
import { gql } from '../api.js';
import { barChart } from '../chart.js';
import { h, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

const LEVELS = ['COUNTRY', 'REGION', 'CITY'] as const;
const SHOWN = 20;

export function visitsPanel(refresh: () => void): PanelSpec {
  const day = h('input', {
    type: 'date',
    name: 'day',
    'aria-label': 'day',
    value: new Date().toISOString().slice(0, 10),
    onchange: () => refresh(),
  });
  const level = h(
    'select',
    { name: 'level', 'aria-label': 'level', onchange: () => refresh() },
    ...LEVELS.map((l) => h('option', { value: l }, l.toLowerCase())),
  );
  return {
    id: 'visits',
    title: 'Daily visits',
    controls: [day, level],
    everyMs: 10_000,
    empty: () => `No visits on ${day.value}: upload an access log of that day (uploadAccessLog; README, step 6).`,
    async load(body, { width, dispose }) {
      if (!day.value) return false;
      const { dailyVisits } = await gql<{ dailyVisits: { place: string; count: number }[] }>(
        `query DashboardVisits($day: String!, $level: GeoLevel!) { dailyVisits(day: $day, level: $level, first: ${SHOWN}) { place count } }`,
        { day: day.value, level: level.value },
      );
      if (dailyVisits.length === 0) return false;
      const chart = h('div', { className: 'chart' });
      body.append(chart);
      const plot = barChart(chart, width, {
        labels: dailyVisits.map((v) => v.place),
        values: dailyVisits.map((v) => v.count),
        label: 'visits',
        category: 'place',
      });
      dispose(() => plot.destroy());
      body.append(
        h(
          'details',
          {},
          h('summary', {}, `Places (${dailyVisits.length})`),
          table(
            ['place', 'visits'],
            dailyVisits.map((v) => [v.place, v.count]),
            { className: 'visits' },
          ),
        ),
      );
      return true;
    },
  };
}
