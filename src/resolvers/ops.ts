import type { Context } from '../context.js';
import { requireAdmin } from './auth.js';

export const maintenance = (_root: unknown, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.services.operations.isUnderMaintenance();

export const setMaintenance = async (_root: unknown, args: { enabled: boolean }, ctx: Context): Promise<boolean> => {
  await requireAdmin(ctx);
  return ctx.services.operations.setMaintenance(args.enabled);
};

export const config = async (_root: unknown, args: { type: string; component: string }, ctx: Context): Promise<unknown> => {
  await requireAdmin(ctx);
  return ctx.services.operations.getConfig(args.type, args.component);
};

export const setConfig = async (
  _root: unknown,
  args: { type: string; component: string; value?: unknown },
  ctx: Context,
): Promise<unknown> => {
  await requireAdmin(ctx);
  return ctx.services.operations.setConfig(args.type, args.component, args.value);
};
