/** Counters, statistics and logs: who is asking, which arguments, one service call. */
import type { Context } from '../context.js';
import type { CounterSample } from '../services/telemetry/counters.js';
import { COMMON_PAGE, DEFAULT_SEVERITY, RECENT_PAGE, type Severity } from '../services/telemetry/logs.js';
import { SLOWEST_PAGE, type Stats } from '../services/telemetry/stats.js';
import { requireAdmin, requireViewer } from './auth.js';

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
  return ctx.services.counters.samples(args);
};

export const stats = (_root: unknown, args: { context: string; type: string }, ctx: Context): Promise<Stats | null> => {
  requireViewer(ctx);
  return ctx.services.stats.get(args);
};

export const slowestOperations = (_root: unknown, args: { first?: number | null }, ctx: Context) => {
  requireViewer(ctx);
  return ctx.services.metrics.slowest({ first: args.first ?? SLOWEST_PAGE.default });
};

export const recentLogs = async (
  _root: unknown,
  args: { name: string; severity?: Severity | null; first?: number | null },
  ctx: Context,
): Promise<string[]> => {
  await requireAdmin(ctx);
  return ctx.services.logs.recent({
    name: args.name,
    severity: args.severity ?? DEFAULT_SEVERITY,
    first: args.first ?? RECENT_PAGE.default,
  });
};

export const commonLogs = async (
  _root: unknown,
  args: { name: string; severity?: Severity | null; first?: number | null },
  ctx: Context,
) => {
  await requireAdmin(ctx);
  return ctx.services.logs.common({
    name: args.name,
    severity: args.severity ?? DEFAULT_SEVERITY,
    first: args.first ?? COMMON_PAGE.default,
  });
};
