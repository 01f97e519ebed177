/**
 * Ads: admins index, list and read them; anyone (signed in or not) gets an ad for a page and records its clicks.
 * What an ad earns and spends (its value, eCPM, counts and budgets) is an admin's to see, wherever it is selected.
 * An Ad is resolved from its id; its other fields load it through the operation's DataLoader, so `ad { id }`
 * reads nothing more.
 */
import type { Context } from '../context.js';
import { notFound } from '../errors.js';
import type { Ad, AdInput, AdTarget } from '../services/ads/ads.js';
import { requireAdmin, requireAdminField } from './auth.js';

type Optional<T> = { [K in keyof T]?: T[K] | null };

/** What an Ad field resolves from. */
export interface AdRef {
  id: string;
}

export const ad = async (_root: unknown, args: { id: string }, ctx: Context): Promise<AdRef | null> => {
  await requireAdmin(ctx);
  const found = await ctx.services.ads.ad(args);
  if (found) ctx.loaders.ads.prime(found.id, found);
  return found;
};

export const ads = async (
  _root: unknown,
  args: Optional<{ first: number; after: string }>,
  ctx: Context,
): Promise<AdRef[]> => {
  await requireAdmin(ctx);
  const listed = await ctx.services.ads.list({ first: args.first ?? 50, after: args.after });
  for (const a of listed) ctx.loaders.ads.prime(a.id, a);
  return listed;
};

export const indexAd = async (_root: unknown, args: { input: AdInput }, ctx: Context): Promise<AdRef> => {
  await requireAdmin(ctx);
  const indexed = await ctx.services.ads.indexAd(args.input);
  ctx.loaders.ads.clear(indexed.id).prime(indexed.id, indexed);
  return indexed;
};

export const deleteAd = async (_root: unknown, args: { id: string }, ctx: Context): Promise<boolean> => {
  await requireAdmin(ctx);
  const deleted = await ctx.services.ads.deleteAd(args);
  ctx.loaders.ads.clear(args.id);
  return deleted;
};

export const targetAd = (
  _root: unknown,
  args: { locations: string[]; content?: string | null },
  ctx: Context,
): Promise<AdTarget | null> =>
  ctx.services.ads.targetAd({ username: ctx.viewer?.username ?? null, address: ctx.address }, args);

export const targetedAd = (target: AdTarget): AdRef => ({ id: target.adId });

export const recordClick = (
  _root: unknown,
  args: { targetingId: string; adId: string; action?: boolean | null },
  ctx: Context,
): Promise<boolean> => ctx.services.ads.recordClick({ ...args, action: args.action ?? false });

/** A field of an ad, loaded; NOT_FOUND when the ad was deleted since it was named. */
export const adField =
  <K extends keyof Ad>(field: K) =>
  async (ref: AdRef, _args: unknown, ctx: Context): Promise<Ad[K]> => {
    const loaded = await ctx.loaders.ads.load(ref.id);
    if (!loaded) throw notFound(`ad "${ref.id}"`);
    return loaded[field];
  };

/** The same for an admin-only field. */
export const adminField = <K extends keyof Ad>(field: K) => {
  const load = adField(field);
  return async (ref: AdRef, args: unknown, ctx: Context): Promise<Ad[K]> => {
    await requireAdminField(ctx);
    return load(ref, args, ctx);
  };
};
