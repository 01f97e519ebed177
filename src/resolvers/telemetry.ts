/** Counters, statistics and logs: who asks (the schema's scopes), one service call. */
import type { SignedIn } from '../context.js';
import type { CounterSample } from '../services/telemetry/counters.js';
import type { Severity } from '../services/telemetry/logs.js';
import type { Stats } from '../services/telemetry/stats.js';

export const counters = (_root: unknown, _args: unknown, ctx: SignedIn): Promise<string[]> =>
  ctx.services.counters.list();

export const counter = (
  _root: unknown,
  args: { name: string; precision: number },
  ctx: SignedIn,
): Promise<CounterSample[]> => ctx.services.counters.cachedSamples(args);

export const stats = (_root: unknown, args: { context: string; type: string }, ctx: SignedIn): Promise<Stats | null> =>
  ctx.services.stats.cachedGet(args);

export const slowestOperations = (
  _root: unknown,
  args: { first: number },
  ctx: SignedIn,
): Promise<{ name: string; averageSeconds: number }[]> => ctx.services.metrics.slowest(args);

export const recentLogs = (
  _root: unknown,
  args: { name: string; severity: Severity; first: number },
  ctx: SignedIn,
): Promise<string[]> => ctx.services.logs.recent(args);

export const commonLogs = (
  _root: unknown,
  args: { name: string; severity: Severity; first: number },
  ctx: SignedIn,
): Promise<{ message: string; count: number }[]> => ctx.services.logs.common(args);
