/** Operations control: the admin scope (schema/ops.ts) decides who asks; one service call each. */
import type { Context, SignedIn } from '../context.js';
import type { ProcessFigures } from '../services/ops/figures.js';

export const maintenance = (_root: unknown, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.services.ops.isUnderMaintenance();

export const setMaintenance = (_root: unknown, args: { enabled: boolean }, ctx: SignedIn): Promise<boolean> =>
  ctx.services.ops.setMaintenance(args);

export const config = (_root: unknown, args: { type: string; component: string }, ctx: SignedIn): Promise<unknown> =>
  ctx.services.ops.config(args);

export const setConfig = (
  _root: unknown,
  args: { type: string; component: string; value?: unknown },
  ctx: SignedIn,
): Promise<unknown> => ctx.services.ops.setConfig({ ...args, value: args.value });

export const gatewayFigures = (_root: unknown, _args: unknown, ctx: SignedIn): Promise<ProcessFigures> =>
  ctx.services.processFigures.read();
