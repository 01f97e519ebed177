/** Counters, statistics and logs: who is asking, which arguments, one service call. */
import type { Context } from '../context.js';
import { badInput } from '../errors.js';
import type { CounterSample } from '../services/telemetry/counters.js';
import type { Severity } from '../services/telemetry/logs.js';
import { ACCESS_TIME } from '../services/telemetry/metrics.js';
import { checkPage } from '../services/shared/paging.js';
import type { Stats } from '../services/telemetry/stats.js';
import { requireAdmin, requireViewer } from './auth.js';

export const RANKED_MAX = 100;
const LOG_MAX = 100;

/** Names of counters, statistics and logs: what the gateway writes (operation names, `gateway`) fits this. */
function checkName(argument: string, value: string): string {
  if (!/^[^{}\s]{1,200}$/.test(value))
    throw badInput(argument, 'must be 1 to 200 characters, without spaces or braces');
  return value;
}

export const counters = (_root: unknown, _args: unknown, ctx: Context): Promise<string[]> => {
  requireViewer(ctx);
  return ctx.services.counters.list();
};

export const counter = (
  _root: unknown,
  args: { name: string; precision: number },
  ctx: Context,
): Promise<CounterSample[]> => {
  requireViewer(ctx);
  return ctx.services.counters.samples(checkName('name', args.name), args.precision);
};

export const stats = (_root: unknown, args: { context: string; type: string }, ctx: Context): Promise<Stats | null> => {
  requireViewer(ctx);
  return ctx.services.stats.get(checkName('context', args.context), checkName('type', args.type));
};

export const slowestOperations = async (_root: unknown, args: { first?: number | null }, ctx: Context) => {
  requireViewer(ctx);
  const first = args.first ?? 10;
  checkPage('first', first, RANKED_MAX);
  return (await ctx.services.stats.slowest(ACCESS_TIME, first)).map(({ context, average }) => ({
    name: context,
    averageSeconds: average,
  }));
};

export const recentLogs = async (
  _root: unknown,
  args: { name: string; severity?: Severity | null; first?: number | null },
  ctx: Context,
): Promise<string[]> => {
  await requireAdmin(ctx);
  const first = args.first ?? 100;
  checkPage('first', first, LOG_MAX);
  return ctx.services.logs.recent(checkName('name', args.name), args.severity ?? 'INFO', first);
};

export const commonLogs = async (
  _root: unknown,
  args: { name: string; severity?: Severity | null; first?: number | null },
  ctx: Context,
) => {
  await requireAdmin(ctx);
  const first = args.first ?? 20;
  checkPage('first', first, LOG_MAX);
  return ctx.services.logs.common(checkName('name', args.name), args.severity ?? 'INFO', first);
};
