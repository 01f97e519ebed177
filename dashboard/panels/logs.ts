/**
 * A log's recent lines (`recentLogs`) and this hour's most common messages (`commonLogs`) at the severities
 * ticked; each severity is its own log in Redis, so each ticked one is an alias of one request.
 */
import { gql } from '../api.js';
import { h, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

const SEVERITIES = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
/** The log of the gateway's own warnings and errors. */
const GATEWAY_LOG = 'gateway';
const RECENT_SHOWN = 50;
const COMMON_SHOWN = 10;

export function logsPanel(refresh: () => void): PanelSpec {
  const name = h('input', {
    name: 'log',
    'aria-label': 'log name',
    value: GATEWAY_LOG,
    size: 12,
    onchange: () => refresh(),
  });
  const boxes = SEVERITIES.map((severity) =>
    h('input', {
      type: 'checkbox',
      name: 'severity',
      value: severity,
      checked: severity !== 'DEBUG',
      onchange: () => refresh(),
    }),
  );
  const severities = h(
    'span',
    { className: 'severities' },
    ...boxes.map((box) => h('label', {}, box, box.value.toLowerCase())),
  );
  return {
    id: 'logs',
    title: 'Logs',
    controls: [name, severities],
    everyMs: 5000,
    empty: () =>
      `Nothing in log "${name.value}" at the severities ticked: the gateway writes its warnings and errors to "${GATEWAY_LOG}".`,
    async load(body) {
      const ticked = boxes.filter((b) => b.checked).map((b) => b.value);
      if (ticked.length === 0) return false;
      const query = `query DashboardLogs($name: String!) {
        ${ticked
          .map(
            (s) =>
              `r${s}: recentLogs(name: $name, severity: ${s}, first: ${RECENT_SHOWN})
               c${s}: commonLogs(name: $name, severity: ${s}, first: ${COMMON_SHOWN}) { message count }`,
          )
          .join('\n')}
      }`;
      const data = await gql<Record<string, string[] | { message: string; count: number }[]>>(query, {
        name: name.value,
      });
      // A recent line is "<ISO time> <message>": newest first across severities.
      const recent = ticked
        .flatMap((s) => (data[`r${s}`] as string[]).map((line) => ({ severity: s, line })))
        .sort((a, b) => b.line.localeCompare(a.line))
        .slice(0, RECENT_SHOWN);
      const common = ticked
        .flatMap((s) => (data[`c${s}`] as { message: string; count: number }[]).map((c) => ({ severity: s, ...c })))
        .sort((a, b) => b.count - a.count);
      if (recent.length === 0 && common.length === 0) return false;
      body.append(
        h('h3', {}, 'Recent'),
        h(
          'ol',
          { className: 'recent' },
          ...recent.map(({ severity, line }) =>
            h('li', { 'data-severity': severity }, h('b', {}, severity), ' ', line),
          ),
        ),
        h('h3', {}, 'Most common this hour'),
        table(
          ['severity', 'count', 'message'],
          common.map((c) => [c.severity, c.count, c.message]),
          { className: 'common' },
        ),
      );
      return true;
    },
  };
}
