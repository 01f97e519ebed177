/** Users, sessions and admin grants: who asks (the schema's scopes), one service call. */
import type { Context, SignedIn } from '../context.js';
import { unauthenticated } from '../errors.js';
import type { Authenticated, User } from '../services/users/users.js';

/** Null without a token; a token that is no session says so (UNAUTHENTICATED), rather than looking like none. */
export const me = (_root: unknown, _args: unknown, ctx: Context): User | null => {
  if (ctx.rejected) throw unauthenticated(ctx.rejected);
  return ctx.viewer ? { username: ctx.viewer.username } : null;
};

export const users = (_root: unknown, args: { prefix: string; first: number }, ctx: Context): Promise<User[]> =>
  ctx.services.users.search(args);

export const signUp = (
  _root: unknown,
  args: { username: string; password: string },
  ctx: Context,
): Promise<Authenticated> => ctx.services.users.signUp({ ...args, address: ctx.address });

export const signIn = (
  _root: unknown,
  args: { username: string; password: string },
  ctx: Context,
): Promise<Authenticated> => ctx.services.users.signIn({ ...args, address: ctx.address });

/** Given the token sent even when it is no session any more: a retry announces a revocation cut short. */
export const signOut = async (_root: unknown, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.presentedToken ? ctx.services.sessions.signOut({ token: ctx.presentedToken }) : false;

export const isAdmin = (user: User, _args: unknown, ctx: Context): Promise<boolean> =>
  ctx.loaders.isAdmin.load(user.username);

export const grantAdmin = async (_root: unknown, args: { username: string }, ctx: SignedIn): Promise<User> => ({
  username: await ctx.services.admins.grantAdmin(args),
});

export const revokeAdmin = async (_root: unknown, args: { username: string }, ctx: SignedIn): Promise<User> => ({
  username: await ctx.services.admins.revokeAdmin(args),
});
