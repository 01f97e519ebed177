import type { Context } from '../context.js';
import { requireAdmin } from './auth.js';

export const maintenance = (_root: unknown, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.services.ops.isUnderMaintenance();

export const setMaintenance = async (_root: unknown, args: { enabled: boolean }, ctx: Context): Promise<boolean> => {
  await requireAdmin(ctx);
  return ctx.services.ops.setMaintenance(args.enabled);
};

export const config = async (
  _root: unknown,
  args: { type: string; component: string },
  ctx: Context,
): Promise<unknown> => {
  await requireAdmin(ctx);
  return ctx.services.ops.config(args.type, args.component);
};

export const setConfig = async (
  _root: unknown,
  args: { type: string; component: string; value?: unknown },
  ctx: Context,
): Promise<unknown> => {
  await requireAdmin(ctx);
  return ctx.services.ops.setConfig(args.type, args.component, args.value);
};
