/**
 * Requests per second by operation (`counters`, then `counter` of each at the chosen precision, in one request), as
 * a line chart of count / precision, with the samples in a table under it.
 */
import { gql } from '../api.js';
import { lineChart } from '../chart.js';
import { h, num, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

/** The precisions the panel offers (seconds), of the seven `counter` keeps. */
const PRECISIONS = [
  [1, '1 s'],
  [5, '5 s'],
  [60, '1 min'],
  [300, '5 min'],
  [3600, '1 h'],
] as const;
/** Operations charted at most: the busiest over the samples read. */
const SERIES_MAX = 10;
/** Counters read in one request (each its own alias; MAX_QUERY_ALIASES is 30 by default). */
const BATCH = 25;
/** Counters read at most, in batches at once (a gateway counts at most METRICS_NAMES_MAX names). */
const READ_MAX = 100;

type Sample = { time: string; count: number };

/** The samples of each counter of `names` at `precision`, in one request. */
async function readCounters(names: string[], precision: number): Promise<{ name: string; samples: Sample[] }[]> {
  const variables: Record<string, unknown> = { precision };
  names.forEach((name, i) => (variables[`n${i}`] = name));
  const query = `query DashboardCounter($precision: Int!, ${names.map((_, i) => `$n${i}: String!`).join(', ')}) {
    ${names.map((_, i) => `c${i}: counter(name: $n${i}, precision: $precision) { time count }`).join('\n')}
  }`;
  const data = await gql<Record<string, Sample[]>>(query, variables);
  return names.map((name, i) => ({ name, samples: data[`c${i}`] ?? [] }));
}

export function requestsPanel(refresh: () => void): PanelSpec {
  const precision = h(
    'select',
    { name: 'precision', 'aria-label': 'precision', onchange: () => refresh() },
    ...PRECISIONS.map(([seconds, label]) => h('option', { value: String(seconds), selected: seconds === 5 }, label)),
  );
  return {
    id: 'requests',
    title: 'Requests per second by operation',
    controls: [precision],
    everyMs: 5000,
    empty: () => 'No counters yet: run a query against /graphql (each operation is counted by its name).',
    async load(body, { width, dispose }) {
      const seconds = Number(precision.value);
      const { counters } = await gql<{ counters: string[] }>('query DashboardCounters { counters }');
      if (counters.length === 0) return false;
      const names = counters.slice(0, READ_MAX);
      const batches = Array.from({ length: Math.ceil(names.length / BATCH) }, (_, b) =>
        names.slice(b * BATCH, (b + 1) * BATCH),
      );
      const read = await Promise.all(batches.map((batch) => readCounters(batch, seconds)));
      const all = read
        .flat()
        .map((c) => ({ ...c, total: c.samples.reduce((sum, s) => sum + s.count, 0) }))
        .filter((c) => c.total > 0)
        .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name))
        .slice(0, SERIES_MAX);
      if (all.length === 0) return false;
      // Every slot from the oldest sample to the newest: a slot without a sample counted nothing.
      const slots = all.flatMap((c) => c.samples.map((s) => Date.parse(s.time) / 1000));
      const [first, last] = [Math.min(...slots), Math.max(...slots)];
      const times = Array.from({ length: Math.floor((last - first) / seconds) + 1 }, (_, i) => first + i * seconds);
      const series = all.map((c) => {
        const at = new Map(c.samples.map((s) => [Date.parse(s.time) / 1000, s.count / seconds]));
        return { label: c.name, values: times.map((t) => at.get(t) ?? 0) };
      });
      const chart = h('div', { className: 'chart' });
      body.append(chart);
      const plot = lineChart(chart, width, { times, series, unit: 'requests / s' });
      dispose(() => plot.destroy());
      body.append(
        h(
          'details',
          {},
          h('summary', {}, `Samples (${all.length} operations, ${seconds} s each)`),
          table(
            ['operation', 'slot start', 'count', 'per second'],
            all.flatMap((c) => c.samples.map((s) => [c.name, s.time, s.count, num(s.count / seconds, 2)])),
            { className: 'samples' },
          ),
        ),
      );
      return true;
    },
  };
}
