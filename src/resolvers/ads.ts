/**
 * Ads: admins index, list and read them (the schema's `admin` scope); anyone (signed in or not) gets an ad for a
 * page and records its clicks. What an ad earns and spends (its value, eCPM, counts and budgets) is an admin's to
 * see, wherever it is selected (admin-scoped fields). A targeting's Ad is resolved from its id: its other fields
 * load it through the operation's DataLoader, so `targetAd { ad { id } }` reads nothing more.
 */
import type { Context, SignedIn } from '../context.js';
import { notFound } from '../errors.js';
import type { Ad, AdClick, AdInput, AdPage, AdTarget, AdTotals } from '../services/ads/ads.js';

/** What an Ad field resolves from: the ad itself, or (a targeting's) its id alone. */
export type AdRef = Ad | { id: string };

export const ad = (_root: unknown, args: { id: string }, ctx: SignedIn): Promise<Ad | null> =>
  ctx.services.ads.ad(args);

export const ads = (_root: unknown, args: { first: number; after?: string | null }, ctx: SignedIn): Promise<Ad[]> =>
  ctx.services.ads.list(args);

export const adTotals = (_root: unknown, _args: unknown, ctx: SignedIn): Promise<AdTotals> => ctx.services.ads.totals();

export const indexAd = (_root: unknown, args: { input: AdInput }, ctx: SignedIn): Promise<Ad> =>
  ctx.services.ads.indexAd(args.input);

export const deleteAd = (_root: unknown, args: { id: string }, ctx: SignedIn): Promise<boolean> =>
  ctx.services.ads.deleteAd(args);

/** The viewer is the signed-in user, or else the client's address. */
export const targetAd = (_root: unknown, args: AdPage, ctx: Context): Promise<AdTarget | null> =>
  ctx.services.ads.targetAd({ username: ctx.viewer?.username ?? null, address: ctx.address }, args);

export const targetedAd = (target: AdTarget): AdRef => ({ id: target.adId });

export const recordClick = (_root: unknown, args: AdClick, ctx: Context): Promise<boolean> =>
  ctx.services.ads.recordClick(args);

/** A field of an ad, loaded when the ref is an id; NOT_FOUND when the ad was deleted since it was named. */
export const adField =
  <K extends keyof Ad>(field: K) =>
  async (ref: AdRef, _args: unknown, ctx: Context): Promise<Ad[K]> => {
    if ('type' in ref) return ref[field];
    const loaded = await ctx.loaders.ads.load(ref.id);
    if (!loaded) throw notFound(`ad "${ref.id}"`);
    return loaded[field];
  };
