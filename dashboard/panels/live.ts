/**
 * The answering gateway process's live figures (`gatewayFigures`, what its /metrics prints): sockets, connections
 * and subscriptions by transport now, and rates computed here from two readings of the same process (operations,
 * the mailbox poller's reads: its Redis round trips, doorbell rings, and the commands and round trips of all its
 * Redis clients), charted over the panel's last readings. Behind
 * a load balancer a reading may come from another process: the rates then start again from it.
 */
import { gql } from '../api.js';
import { lineChart } from '../chart.js';
import { h, num, table } from '../dom.js';
import type { ProcessFigures } from '../../src/services/ops/figures.js';
import type { PanelSpec } from '../panel.js';

/** Readings charted at most (one every EVERY_MS). */
const KEPT = 60;
const EVERY_MS = 2000;

/** `gatewayFigures` as the panel asks it (dates come as ISO strings). */
type Figures = Pick<
  ProcessFigures,
  | 'hostname'
  | 'pid'
  | 'connections'
  | 'websockets'
  | 'subscriptions'
  | 'operations'
  | 'pollerReads'
  | 'pollerHeadsRead'
  | 'doorbellRings'
  | 'watchedHeads'
  | 'redisCommands'
  | 'redisRoundTrips'
> & { startedAt: string; readAt: string };

/** The counters whose rates the panel shows, with their labels. */
const RATES = [
  ['operations', 'operations / s'],
  ['pollerReads', 'poller reads (Redis round trips) / s'],
  ['pollerHeadsRead', 'heads read / s'],
  ['doorbellRings', 'doorbell rings / s'],
  ['redisCommands', 'Redis commands / s'],
  ['redisRoundTrips', 'Redis round trips / s'],
] as const;

export function livePanel(): PanelSpec {
  let previous: Figures | undefined;
  /** Rates between readings: the time (s) of the later one, and each counter's rate. */
  let history: { time: number; rates: number[] }[] = [];
  return {
    id: 'live',
    title: 'Live: this gateway process',
    everyMs: EVERY_MS,
    empty: () => 'No figures yet.',
    async load(body, { width, dispose }) {
      const { gatewayFigures: f } = await gql<{ gatewayFigures: Figures }>(
        `query DashboardLive { gatewayFigures { hostname pid startedAt readAt connections websockets
          subscriptions { name count } operations pollerReads pollerHeadsRead doorbellRings watchedHeads
          redisCommands redisRoundTrips } }`,
      );
      const same = previous && previous.hostname === f.hostname && previous.pid === f.pid;
      if (!same) history = [];
      if (previous && same) {
        const seconds = (Date.parse(f.readAt) - Date.parse(previous.readAt)) / 1000;
        if (seconds > 0)
          history = [
            ...history,
            {
              time: Date.parse(f.readAt) / 1000,
              rates: RATES.map(([key]) => Math.max(0, (f[key] - previous![key]) / seconds)),
            },
          ].slice(-KEPT);
      }
      previous = f;
      const subscriptions = (transport: string) => f.subscriptions.find((s) => s.name === transport)?.count ?? 0;
      body.append(
        h(
          'p',
          { className: 'note', 'data-process': `${f.hostname}:${f.pid}` },
          `Process ${f.hostname} pid ${f.pid}, up since ${new Date(f.startedAt).toLocaleString()}. Each gateway process has its own figures; the counters in Redis are the deployment's.`,
        ),
        table(
          ['connections', 'graphql-ws sockets', 'subscriptions (ws)', 'subscriptions (sse)', 'watched heads'],
          [[f.connections, f.websockets, subscriptions('ws'), subscriptions('sse'), f.watchedHeads]],
          { className: 'live-now' },
        ),
      );
      const latest = history.at(-1);
      body.append(
        table(
          ['', ...RATES.map(([, label]) => label)],
          [
            ['since start', ...RATES.map(([key]) => num(f[key]))],
            ['per second now', ...RATES.map((_, i) => (latest ? num(latest.rates[i]!, 2) : '…'))],
          ],
          { className: 'live-rates' },
        ),
      );
      if (history.length >= 2) {
        const chart = h('div', { className: 'chart' });
        body.append(chart);
        const plot = lineChart(chart, width, {
          times: history.map((r) => r.time),
          series: RATES.map(([, label], i) => ({ label, values: history.map((r) => r.rates[i]!) })),
          unit: 'per second',
        });
        dispose(() => plot.destroy());
      } else body.append(h('p', { className: 'empty' }, 'Rates appear from the second reading on (a few seconds).'));
      return true;
    },
  };
}
