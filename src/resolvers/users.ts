import type { Context } from '../context.js';
import type { Authenticated, User } from '../services/users/users.js';
import { requireAdmin } from './auth.js';

export const me = (_root: unknown, _args: unknown, ctx: Context): User | null =>
  ctx.viewer ? { username: ctx.viewer.username } : null;

export const users = (_root: unknown, args: { prefix: string; first?: number | null }, ctx: Context): Promise<User[]> =>
  ctx.services.users.search(args.prefix, args.first ?? 10);

export const signUp = (
  _root: unknown,
  args: { username: string; password: string },
  ctx: Context,
): Promise<Authenticated> => ctx.services.users.signUp(args.username, args.password, ctx.address);

export const signIn = (
  _root: unknown,
  args: { username: string; password: string },
  ctx: Context,
): Promise<Authenticated> => ctx.services.users.signIn(args.username, args.password, ctx.address);

export const signOut = async (_root: unknown, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.token ? ctx.services.sessions.signOut(ctx.token) : false;

export const isAdmin = (user: User, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.loaders.isAdmin.load(user.username);

export const grantAdmin = async (_root: unknown, args: { username: string }, ctx: Context): Promise<User> => {
  await requireAdmin(ctx);
  return { username: await ctx.services.admins.grantAdmin(args.username) };
};

export const revokeAdmin = async (_root: unknown, args: { username: string }, ctx: Context): Promise<User> => {
  await requireAdmin(ctx);
  return { username: await ctx.services.admins.revokeAdmin(args.username) };
};
