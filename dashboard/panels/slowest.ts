/** The ten slowest operations this hour (`slowestOperations`), with count, average, stddev and max from `stats`. */
import { gql } from '../api.js';
import { num, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

/** The statistic the gateway keeps of each operation's time (seconds), as `stats`' description names it. */
const ACCESS_TIME = 'AccessTime';
const SHOWN = 10;

interface Stats {
  count: number;
  average: number;
  stddev: number;
  max: number;
}

const ms = (seconds: number) => num(seconds * 1000, 2);

export function slowestPanel(): PanelSpec {
  return {
    id: 'slowest',
    title: 'Slowest operations this hour',
    everyMs: 5000,
    empty: () => 'No operation timed this hour yet: run a query against /graphql.',
    async load(body) {
      const { slowestOperations } = await gql<{ slowestOperations: { name: string }[] }>(
        `query DashboardSlowest { slowestOperations(first: ${SHOWN}) { name } }`,
      );
      if (slowestOperations.length === 0) return false;
      const variables: Record<string, unknown> = { type: ACCESS_TIME };
      slowestOperations.forEach((op, i) => (variables[`c${i}`] = op.name));
      const query = `query DashboardStats($type: String!, ${slowestOperations.map((_, i) => `$c${i}: String!`).join(', ')}) {
        ${slowestOperations.map((_, i) => `s${i}: stats(context: $c${i}, type: $type) { count average stddev max }`).join('\n')}
      }`;
      const stats = await gql<Record<string, Stats | null>>(query, variables);
      body.append(
        table(
          ['operation', 'count', 'average (ms)', 'stddev (ms)', 'max (ms)'],
          slowestOperations.map((op, i) => {
            const s = stats[`s${i}`];
            return s ? [op.name, num(s.count), ms(s.average), ms(s.stddev), ms(s.max)] : [op.name, '–', '–', '–', '–'];
          }),
          { className: 'slowest' },
        ),
      );
      return true;
    },
  };
}
