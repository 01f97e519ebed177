/**
 * Search (`searchActivity`, the whole deployment's): documents indexed, searches per second by kind (the sort, and
 * the query's shape: AND, OR, NOT, PREFIX) over the last minute as lines, and this hour's busiest queries with what
 * their last search found.
 */
import { gql } from '../api.js';
import { lineChart } from '../chart.js';
import { h, num, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

const SECONDS = 60;
const SHOWN = 10;

interface Activity {
  documents: number;
  rates: { kind: string; from: string; counts: number[] }[];
  busiestQueries: { query: string; searches: number; found: number }[];
}

export function searchPanel(): PanelSpec {
  return {
    id: 'search',
    title: 'Search',
    everyMs: 5000,
    empty: () => 'No documents and no search yet: index a document (indexDocument), search it (searchDocuments).',
    async load(body, { width, dispose }) {
      const { searchActivity: a } = await gql<{ searchActivity: Activity }>(
        `query DashboardSearch { searchActivity { documents rates(seconds: ${SECONDS}) { kind from counts }
          busiestQueries(first: ${SHOWN}) { query searches found } } }`,
      );
      body.append(
        h(
          'p',
          { className: 'note' },
          h('b', { 'data-documents': a.documents }, num(a.documents)),
          ' documents indexed.',
        ),
      );
      if (a.documents === 0 && a.busiestQueries.length === 0) return false;
      if (a.rates.length > 0) {
        const from = Date.parse(a.rates[0]!.from) / 1000;
        const chart = h('div', { className: 'chart' });
        body.append(chart);
        const plot = lineChart(chart, width, {
          times: a.rates[0]!.counts.map((_, i) => from + i),
          series: a.rates.map((r) => ({ label: r.kind, values: r.counts })),
          unit: 'searches / s',
        });
        dispose(() => plot.destroy());
        body.append(
          table(
            ['kind', `searches (last ${SECONDS} s)`],
            a.rates.map((r) => [r.kind, r.counts.reduce((n, c) => n + c, 0)]),
            { className: 'search-kinds' },
          ),
        );
      } else body.append(h('p', { className: 'empty' }, `No search in the last ${SECONDS} s.`));
      body.append(h('h3', {}, 'Busiest queries this hour'));
      if (a.busiestQueries.length === 0)
        body.append(h('p', { className: 'empty' }, 'No search this hour: run searchDocuments, then look again.'));
      else
        body.append(
          table(
            ['query', 'searches', 'found'],
            a.busiestQueries.map((q) => [q.query, q.searches, q.found]),
            { className: 'busiest' },
          ),
        );
      return true;
    },
  };
}
