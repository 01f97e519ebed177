/**
 * Ads: admins index, list and read them; anyone (signed in or not) gets an ad for a page and records its clicks.
 * What an ad earns and spends (its value, eCPM, counts and budgets) is an admin's to see, wherever it is selected.
 */
import type { Context } from '../context.js';
import { notFound } from '../errors.js';
import { parseAdId, viewerOf, type Ad, type AdInput, type AdTarget } from '../services/ads/ads.js';
import { requireAdmin, requireAdminField } from './auth.js';

type Optional<T> = { [K in keyof T]?: T[K] | null };

export const ad = async (_root: unknown, args: { id: string }, ctx: Context): Promise<Ad | null> => {
  await requireAdmin(ctx);
  return ctx.loaders.ads.load(parseAdId(args.id));
};

export const ads = async (
  _root: unknown,
  args: Optional<{ first: number; after: string }>,
  ctx: Context,
): Promise<Ad[]> => {
  await requireAdmin(ctx);
  const ids = await ctx.services.ads.list(args.first ?? 50, args.after ?? null);
  return (await ctx.loaders.ads.loadMany(ids)).filter((a): a is Ad => {
    if (a instanceof Error) throw a;
    return a !== null; // deleted since it was listed
  });
};

export const indexAd = async (_root: unknown, args: { input: AdInput }, ctx: Context): Promise<Ad> => {
  await requireAdmin(ctx);
  const indexed = await ctx.services.ads.indexAd(args.input);
  ctx.loaders.ads.clear(indexed.id).prime(indexed.id, indexed);
  return indexed;
};

export const deleteAd = async (_root: unknown, args: { id: string }, ctx: Context): Promise<boolean> => {
  await requireAdmin(ctx);
  const deleted = await ctx.services.ads.deleteAd(args.id);
  ctx.loaders.ads.clear(args.id);
  return deleted;
};

export const targetAd = (
  _root: unknown,
  args: { locations: string[]; content?: string | null },
  ctx: Context,
): Promise<AdTarget | null> =>
  ctx.services.ads.targetAd(viewerOf(ctx.viewer?.username ?? null, ctx.address), args.locations, args.content ?? null);

export const targetedAd = async (target: AdTarget, _args: unknown, ctx: Context): Promise<Ad> => {
  const found = await ctx.loaders.ads.load(target.adId);
  if (!found) throw notFound(`ad "${target.adId}"`); // deleted since it was picked
  return found;
};

export const recordClick = (
  _root: unknown,
  args: { targetingId: string; adId: string; action?: boolean | null },
  ctx: Context,
): Promise<boolean> => ctx.services.ads.recordClick(args.targetingId, args.adId, args.action ?? false);

/** An admin-only field of an ad. */
export const adminOnly =
  <K extends keyof Ad>(field: K) =>
  async (a: Ad, _args: unknown, ctx: Context): Promise<Ad[K]> => {
    await requireAdminField(ctx);
    return a[field];
  };
