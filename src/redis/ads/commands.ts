/**
 * The ads domain's door to Redis: its scripts and reads, each in one shard (`shard`, one of `shards`: every key of a
 * shard on its slot). The services of src/services/ads/ reach Redis only through the object adCommands() returns.
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import { script } from '../scripts.js';
import { refused, STATUS, type Refused } from '../status.js';
import { adKeys, adShardTag, type AdKeys } from './keys.js';

const indexAdScript = script<number>('indexAd');
const deleteAdScript = script<number>('deleteAd');
const learnAdScript = script<number | AdType>('learnAd');
const targetAdScript = script<number | string[]>('targetAd');
const recordClickScript = script<number>('recordClick');

/**
 * The types of ads, as stored in their profiles and cards (what the scripts read: a CPM ad is paid per view and
 * learns nothing, a CPA ad learns from actions, a CPC ad from clicks).
 */
export const AD_TYPES = ['CPC', 'CPA', 'CPM'] as const;
export type AdType = (typeof AD_TYPES)[number];

/** What a change needs to know of the stored ad first: its version ('0': none), locations and words. */
export interface AdState {
  version: string;
  locations: string[];
  terms: string[];
}

export interface StoredAd {
  type: AdType;
  value: number;
  ecpm: number;
  locations: string[];
  terms: string[];
  views: number;
  clicks: number;
  actions: number;
  spent: number;
  spentToday: number;
  budget: number | null;
  dailyBudget: number | null;
}

export interface Targeting {
  adId: string;
  ecpm: number;
  explored: boolean;
  matchedTerms: string[];
}

/** One shard's pick (nothing recorded): the book's, and the one exploration makes with the score it ranked it by. */
export interface Pick {
  book: { adId: string; ecpm: number };
  choice: { adId: string; rank: number; ecpm: number };
}

/** A shard: its keys (src/redis/ads/keys.ts). */
export type AdShard = AdKeys;

/** What a targeting tells a shard's targetAd script. */
interface TargetArgs {
  shard: AdShard;
  day: number;
  minute: number;
  nonce: string;
  viewer: string;
  locations: readonly string[];
  words: readonly string[];
  cap: number;
  explore: boolean;
  seed: number;
  task: string;
}

/** The columns of per-ad attributes and counts, which deleting an ad clears. */
const COLUMNS = ['profiles', 'budgets', 'dailyBudgets', 'views', 'clicks', 'actions', 'events', 'spent'] as const;

export type AdCommands = ReturnType<typeof adCommands>;

export function adCommands(redis: RedisClient, space: Keyspace) {
  const targetIn = (a: TargetArgs, mode: 'serve' | 'pick' | 'commit', ad = '', explored = false) => {
    const k = a.shard;
    return targetAdScript(
      redis,
      [
        k.views,
        k.spent,
        k.budgets,
        k.dailyBudgets,
        k.daily(a.day),
        k.typeStats,
        k.seen(a.day, a.viewer),
        k.targetings(a.minute),
        k.vocabulary,
        k.wordViews,
        k.learnPending,
        k.queueReady,
        k.queueDelayed,
        ...a.locations.map(k.location),
        ...a.words.map(k.word),
      ],
      [
        a.day,
        a.nonce,
        a.cap,
        a.explore ? 1 : 0,
        a.seed,
        a.task,
        a.locations.length,
        mode,
        ad,
        explored ? 1 : 0,
        ...a.words,
      ],
    );
  };
  /** A serve's or a commit's reply: the ad served, null when none. */
  const served = (reply: number | string[]): Targeting | null | Refused => {
    if (typeof reply === 'number') return refused(reply);
    if (reply.length === 0) return null;
    const [adId, ecpm, explored, ...matchedTerms] = reply as [string, string, number, ...string[]];
    return { adId, ecpm: Number(ecpm), explored: explored === 1, matchedTerms };
  };
  return {
    /** The `count` shards (ADS_SHARDS), shard n at n. */
    shards(a: { count: number }): AdShard[] {
      return Array.from({ length: a.count }, (_, n) => adKeys(space, adShardTag(n)));
    },

    /** The number of shards the ads were placed in (kept in the first shard): `count` when there are none yet. */
    async claimShardCount({ count }: { count: number }): Promise<number> {
      const { adShardCount } = adKeys(space);
      await redis.set(adShardCount, count, 'NX');
      return Number(await redis.get(adShardCount));
    },

    /** What a change of ad `id` reads first. */
    async readAdState({ shard: k, ...a }: { shard: AdShard; id: string }): Promise<AdState> {
      const [version, locations, terms] = await redis.hmget(k.meta(a.id), 'ver', 'locations', 'terms');
      return {
        version: version ?? '0',
        locations: locations ? (JSON.parse(locations) as string[]) : [],
        terms: terms ? terms.split(' ') : [],
      };
    },

    /** Creates or replaces ad `id` read at version `expected`; its new version, or CHANGED. */
    async indexAd({
      shard: k,
      ...a
    }: {
      shard: AdShard;
      id: string;
      expected: string;
      type: AdType;
      value: number;
      budget: number | null;
      dailyBudget: number | null;
      locations: readonly string[];
      terms: readonly string[];
      droppedLocations: readonly string[];
      droppedTerms: readonly string[];
      task: string;
    }): Promise<number | Refused> {
      const reply = await indexAdScript(
        redis,
        [
          k.ids,
          k.meta(a.id),
          k.ecpm,
          k.profiles,
          k.budgets,
          k.dailyBudgets,
          k.views,
          k.events,
          k.typeStats,
          k.vocabulary,
          k.wordViews,
          k.wordClicks,
          k.wordActions,
          k.learnPending,
          k.queueReady,
          k.queueDelayed,
          k.version,
          k.clicks,
          k.actions,
          ...a.locations.map(k.location),
          ...a.terms.map(k.word),
          ...a.droppedLocations.map(k.location),
          ...a.droppedTerms.map(k.word),
        ],
        [
          a.id,
          a.expected,
          a.type,
          a.value,
          a.budget ?? '',
          a.dailyBudget ?? '',
          JSON.stringify(a.locations),
          a.task,
          JSON.stringify({
            nLocations: a.locations.length,
            words: a.terms,
            nDroppedLocations: a.droppedLocations.length,
            droppedWords: a.droppedTerms,
          }),
        ],
      );
      return reply < 0 ? refused(reply) : reply;
    },

    /**
     * Deletes ad `id` read at version `expected` with its locations and words, and what it spent on UTC day `day`;
     * false when there was none; WRONG_DAY as targetAd.
     */
    async deleteAd({
      shard: k,
      ...a
    }: {
      shard: AdShard;
      id: string;
      expected: string;
      day: number;
      locations: readonly string[];
      terms: readonly string[];
    }): Promise<boolean | Refused> {
      const reply = await deleteAdScript(
        redis,
        [
          k.ids,
          k.meta(a.id),
          k.ecpm,
          k.vocabulary,
          k.wordViews,
          k.wordClicks,
          k.wordActions,
          k.learnPending,
          k.daily(a.day),
          ...COLUMNS.map((c) => k[c]),
          ...a.locations.map(k.location),
          ...a.terms.map(k.word),
        ],
        [a.id, a.expected, COLUMNS.length, a.locations.length, a.day, ...a.terms],
      );
      return reply < 0 ? refused(reply) : reply === 1;
    },

    /**
     * Learns ad `id` (read at version `expected` with its locations and words) again, with `averages` (every type's
     * clicks or actions per 1,000 views over all shards); its type, null when it is gone.
     */
    async learnAd({
      shard: k,
      ...a
    }: {
      shard: AdShard;
      id: string;
      expected: string;
      locations: readonly string[];
      terms: readonly string[];
      averages: Record<AdType, number>;
    }): Promise<AdType | null | Refused> {
      const reply = await learnAdScript(
        redis,
        [
          k.learnPending,
          k.meta(a.id),
          k.ecpm,
          k.profiles,
          k.views,
          k.events,
          k.typeStats,
          k.wordViews,
          k.wordClicks,
          k.wordActions,
          ...a.locations.map(k.location),
          ...a.terms.map(k.word),
        ],
        [a.id, a.expected, a.locations.length, JSON.stringify(a.averages), ...a.terms],
      );
      if (typeof reply === 'string') return reply;
      return reply < 0 ? refused(reply) : null;
    },

    /** A shard's views and clicks (actions) of each type, for its averages: "<TYPE>:<count>" → count. */
    async typeCounts({ shard: k }: { shard: AdShard }): Promise<Record<string, number>> {
      const fields = AD_TYPES.flatMap((t) => [`${t}:views`, `${t}:clicks`, `${t}:actions`]);
      const counts = await redis.hmget(k.typeStats, ...fields);
      return Object.fromEntries(fields.flatMap((f, i) => (counts[i] == null ? [] : [[f, Number(counts[i])]])));
    },

    /**
     * What one shard's ads spent today (UTC `day`) and in all, and their views, and those exploration picked
     * (`typeStats`' `<TYPE>:explored`), summed over the types.
     */
    async spending({ shard: k, day }: { shard: AdShard; day: number }): Promise<{
      spentToday: number;
      spent: number;
      views: number;
      explored: number;
    }> {
      const fields = AD_TYPES.flatMap((t) => [`${t}:views`, `${t}:explored`]);
      const replies = (await redis
        .pipeline()
        .hvals(k.daily(day))
        .hvals(k.spent)
        .hmget(k.typeStats, ...fields)
        .exec())!;
      const [daily, spent, stats] = replies.map(([err, reply]) => {
        if (err) throw err;
        return reply as (string | null)[];
      });
      const total = (values: (string | null)[] | undefined, pick = (_i: number) => true) =>
        (values ?? []).reduce((sum, v, i) => sum + (pick(i) ? Number(v ?? 0) : 0), 0);
      return {
        spentToday: total(daily),
        spent: total(spent),
        views: total(stats, (i) => i % 2 === 0),
        explored: total(stats, (i) => i % 2 === 1),
      };
    },

    /** Writes the types' averages (clicks or actions per 1,000 views over all shards) learned elsewhere. */
    async writeTypeAverages({ shard: k, averages }: { shard: AdShard; averages: Partial<Record<AdType, number>> }) {
      const fields = Object.entries(averages).map(([t, avg]) => [`${t}:avg`, String(avg)] as const);
      if (fields.length > 0) await redis.hset(k.typeStats, Object.fromEntries(fields));
    },

    /** A shard's ads due to be learned again, at most `count`. */
    pendingAds({ shard: k, count }: { shard: AdShard; count: number }): Promise<string[]> {
      return redis.srandmember(k.learnPending, count);
    },

    /** Ads `ids` of one shard (null where none) as they are on UTC day `day`, in one pipeline. */
    async readAds({
      shard: k,
      ...a
    }: {
      shard: AdShard;
      ids: readonly string[];
      day: number;
    }): Promise<(StoredAd | null)[]> {
      const { ids } = a;
      if (ids.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const c of COLUMNS) pipeline.hmget(k[c], ...ids);
      pipeline.hmget(k.daily(a.day), ...ids);
      pipeline.zmscore(k.ecpm, ...ids);
      for (const id of ids) pipeline.hmget(k.meta(id), 'locations', 'terms');
      const replies = (await pipeline.exec())!.map(([err, reply]) => {
        if (err) throw err;
        return reply as (string | null)[];
      });
      const [profiles, budgets, dailyBudgets, views, clicks, actions, , spent, daily, ecpm] = replies;
      const number = (xs: (string | null)[] | undefined, i: number) => Number(xs![i] ?? 0);
      const optional = (xs: (string | null)[] | undefined, i: number) => (xs![i] == null ? null : Number(xs![i]));
      return ids.map((_id, i) => {
        const [locations, terms] = replies[COLUMNS.length + 2 + i]!;
        const profile = profiles![i]?.split(' ');
        if (!profile || locations == null) return null;
        return {
          type: profile[0] as AdType,
          value: Number(profile[1]),
          ecpm: number(ecpm, i),
          locations: JSON.parse(locations) as string[],
          terms: terms ? terms.split(' ') : [],
          views: number(views, i),
          clicks: number(clicks, i),
          actions: number(actions, i),
          spent: number(spent, i),
          spentToday: number(daily, i),
          budget: optional(budgets, i),
          dailyBudget: optional(dailyBudgets, i),
        };
      });
    },

    /** A shard's ad ids in order, the first `count` after `after` (from the start when null). */
    async listAds({ shard: k, ...a }: { shard: AdShard; count: number; after: string | null }): Promise<string[]> {
      if (a.count === 0) return [];
      return redis.zrangebylex(k.ids, a.after === null ? '-' : `(${a.after}`, '+', 'LIMIT', 0, a.count);
    },

    /**
     * Picks, records and returns the ad for a page among a shard's ads (null when none serves), on UTC day `day` and
     * in the targetings of `minute`; WRONG_DAY when `day` is not Redis's.
     */
    async targetAd(a: TargetArgs): Promise<Targeting | null | Refused> {
      return served(await targetIn(a, 'serve'));
    },

    /** Picks the ad for a page among a shard's ads, recording nothing (null when none serves); WRONG_DAY as targetAd. */
    async pickAd(a: TargetArgs): Promise<Pick | null | Refused> {
      const reply = await targetIn(a, 'pick');
      if (typeof reply === 'number') return refused(reply);
      if (reply.length === 0) return null;
      const [bookId, bookEcpm, adId, rank, ecpm] = reply as [string, string, string, string, string];
      return {
        book: { adId: bookId, ecpm: Number(bookEcpm) },
        choice: { adId, rank: Number(rank), ecpm: Number(ecpm) },
      };
    },

    /**
     * Records the view of ad `adId` picked in its shard, as targetAd does, if the viewer's cap and its budgets still
     * allow it; null when they do not or it is gone (nothing is written); WRONG_DAY as targetAd. `explored`: exploration
     * picked it over every shard (counted with its view).
     */
    async commitAd({
      adId,
      explored = false,
      ...a
    }: TargetArgs & { adId: string; explored?: boolean }): Promise<Targeting | null | Refused> {
      return served(await targetIn(a, 'commit', adId, explored));
    },

    /** Counts a click (or an action) of targeting `nonce` of `minute` on ad `id` once; WRONG_DAY as targetAd. */
    async recordClick({
      shard: k,
      ...a
    }: {
      shard: AdShard;
      minute: number;
      nonce: string;
      id: string;
      action: boolean;
      day: number;
      task: string;
    }): Promise<boolean | Refused> {
      const reply = await recordClickScript(
        redis,
        [
          k.targetings(a.minute),
          k.profiles,
          k.clicks,
          k.actions,
          k.events,
          k.spent,
          k.budgets,
          k.dailyBudgets,
          k.daily(a.day),
          k.typeStats,
          k.wordClicks,
          k.wordActions,
          k.learnPending,
          k.queueReady,
          k.queueDelayed,
          k.meta(a.id),
        ],
        [a.nonce, a.id, a.action ? 1 : 0, a.day, a.task],
      );
      return reply === STATUS.WRONG_DAY ? refused(reply) : reply === 1;
    },

    /** Redis's clock, in ms since 1970 (the one every gateway shares). */
    async nowMs(): Promise<number> {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    },
  };
}
