/**
 * Ad targeting (the book's chapter 7.3, without its defects): admins index ads for locations and words; a page's
 * targeting picks the ad with the best eCPM plus word bonuses (or a Thompson sample of it), within frequency caps
 * and budgets, and records the view in one script; a click or an action counts once per targeting; learning (the
 * book's update_cpms) runs as worker tasks, every 100th view of an ad and after its clicks. An ad lives in one shard
 * (on a cluster, one per master): a targeting picks in every shard, then serves the best pick in its shard if its cap
 * and budgets still allow, else picks again there. Details: docs/ads.md.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { badInput, notFound } from '../../errors.js';
import {
  AD_TYPES,
  type AdCommands,
  type AdShard,
  type AdType,
  type Pick,
  type StoredAd,
  type Targeting,
} from '../../redis/ads/commands.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';
import type { QueueService } from '../coordination/queues.js';
import { wordsOf } from '../documents/text.js';
import { whileChanged } from '../shared/changes.js';
import { checkPage, type Page } from '../shared/paging.js';
import { Shards } from '../shared/shards.js';
import { codePoints, userText } from '../shared/text.js';

export { AD_TYPES, type AdType };

export interface AdInput {
  id: string;
  locations: readonly string[];
  content: string;
  type: AdType;
  value: number;
  budget?: number | null;
  dailyBudget?: number | null;
}

/** An ad as admins see it (`spentToday`: on this UTC day). */
export interface Ad extends StoredAd {
  id: string;
  /** Its total or daily budget is spent: it does not serve. */
  exhausted: boolean;
}

export interface AdTarget {
  /** What recordClick names: the targeting, valid 15 minutes. */
  targetingId: string;
  adId: string;
  /** The ad's eCPM on this page: its learned eCPM plus the bonus of the page's words it has. */
  ecpm: number;
  matchedTerms: string[];
  /** Thompson sampling picked another ad than the learned eCPMs would have. */
  explored: boolean;
}

export interface AdTotals {
  spentToday: number;
  spent: number;
  views: number;
  explored: number;
  explorationShare: number | null;
}

/** Who sees a page: the signed-in user (null when none) and the client's address. */
export interface AdViewer {
  username: string | null;
  address: string;
}

/** A page to target: the locations it is shown in, and its content (its words earn ads bonuses). */
export interface AdPage {
  locations: readonly string[];
  content?: string | null;
}

/** A click (an action, with `action`) on ad `adId` of targeting `targetingId`. */
export interface AdClick {
  targetingId: string;
  adId: string;
  action: boolean;
}

export const LEARN_ADS = 'learn-ads';
export const LOCATIONS_MAX = 32;
export const LOCATION_MAX_CHARS = 64;
export const AD_CONTENT_MAX_CHARS = 10_000;
export const ADS_PAGE: Page = { default: 50, max: 500 };
/** What recordClick counts when not told: a click, not an action. */
export const CLICK_ACTION_DEFAULT = false;
/** A page's first this many distinct words count toward word bonuses (a long page costs no more). */
export const PAGE_WORDS_MAX = 100;
/** Values and budgets are at most this (so that 1,000 times one stays a finite, exact-enough double). */
export const AMOUNT_MAX = 1e12;
/** An ad id: 1 to AD_ID_MAX_CHARS of these characters (a regular expression's class). */
export const AD_ID_CHARS = 'A-Za-z0-9_.:-';
export const AD_ID_MAX_CHARS = 64;
const AD_ID = new RegExp(`^[${AD_ID_CHARS}]{1,${AD_ID_MAX_CHARS}}$`);
const TARGETING_ID = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{16})$/;
/** Pending ads one learning task takes at a time. */
const LEARN_BATCH = 100;
/**
 * Commits one targeting tries before it gives up with no ad: each refused commit is an ad that another targeting
 * capped or spent (or an admin deleted) since the pick, which the next pick in its shard leaves out.
 */
const COMMITS_MAX = 16;

/** The checks of raw input: each is given the input's `value` and the `argument` a refusal names. */
interface Checked<T> {
  argument: string;
  value: T;
}

function checkAdId({ argument, value }: Checked<string>): string {
  if (!AD_ID.test(value))
    throw badInput(argument, `must be 1 to ${AD_ID_MAX_CHARS} of A-Z, a-z, 0-9, "_", ".", ":" or "-"`);
  return value;
}

/** Who a frequency cap counts: a signed-in user, else the client's address (an IPv6 client by its /64). */
function viewerOf({ username, address }: AdViewer): string {
  if (username) return `u:${username}`;
  if (!isIPv6(address) || address.startsWith('::ffff:')) return `a:${address.replace(/^::ffff:/, '')}`;
  const groups = address.split('::');
  const head = groups[0] ? groups[0].split(':') : [];
  const tail = groups.length > 1 && groups[1] ? groups[1].split(':') : [];
  const full = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return `a:${full
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}

const dayOf = (ms: number) => Math.floor(ms / 86_400_000);

export interface AdOptions {
  /** Thompson sampling (ADS_EXPLORATION). */
  exploration: boolean;
  /** Views of one ad one viewer gets a UTC day (ADS_FREQUENCY_CAP); 0: no cap. */
  frequencyCap: number;
  /** Shards the ads are placed in (ADS_SHARDS). */
  shards: number;
}

export interface AdDeps {
  commands: AdCommands;
  queues: QueueService;
  options: AdOptions;
  log: Logger;
}

export class AdService {
  /** Where ads live: an ad in shard crc32(id) mod their number. */
  readonly shards: readonly AdShard[];
  private readonly placement: Shards<AdShard>;
  private readonly commands: AdCommands;
  private readonly queues: QueueService;
  private readonly options: AdOptions;
  private readonly log: Logger;

  constructor(deps: AdDeps) {
    ({ commands: this.commands, queues: this.queues, options: this.options, log: this.log } = deps);
    this.placement = new Shards({
      all: this.commands.shards({ count: this.options.shards }),
      claimCount: (a) => this.commands.claimShardCount(a),
      refusal: ({ stored, count }) =>
        `the ads were placed in ${stored} shards, this process has ${count}: index them again under a new KEY_PREFIX`,
    });
    this.shards = this.placement.all;
  }

  /** Creates or replaces an ad (an admin's: the schema's scope checks); what it learned is kept. */
  async indexAd(input: AdInput): Promise<Ad> {
    const id = checkAdId({ argument: 'input.id', value: input.id });
    if (!AD_TYPES.includes(input.type)) throw badInput('input.type', `must be one of ${AD_TYPES.join(', ')}`);
    const value = checkAmount({ argument: 'input.value', value: input.value })!;
    const budget = checkAmount({ argument: 'input.budget', value: input.budget });
    const dailyBudget = checkAmount({ argument: 'input.dailyBudget', value: input.dailyBudget });
    const locations = checkLocations({ argument: 'input.locations', value: input.locations });
    const terms = [...new Set(wordsOf(checkContent({ argument: 'input.content', value: input.content })))];
    const task = this.learnTask();
    const shard = this.shardOf(id);
    await this.placement.ready();
    const result = await whileChanged(`ad "${id}"`, async () => {
      const old = await this.commands.readAdState({ shard, id });
      return this.commands.indexAd({
        shard,
        id,
        expected: old.version,
        type: input.type,
        value,
        budget,
        dailyBudget,
        locations,
        terms,
        droppedLocations: old.locations.filter((l) => !locations.includes(l)),
        droppedTerms: old.terms.filter((t) => !terms.includes(t)),
        task,
      });
    });
    if (isRefused(result)) throw new Error(`unexpected indexAd status ${result.refused}`);
    const [ad] = await this.ads({ ids: [id] });
    if (!ad) throw notFound(`ad "${id}"`); // deleted at once by another admin
    return ad;
  }

  /** Deletes an ad, what it learned and what it spent today; false when there was none. */
  async deleteAd(input: { id: string }): Promise<boolean> {
    const id = checkAdId({ argument: 'id', value: input.id });
    const shard = this.shardOf(id);
    await this.placement.ready();
    return this.onToday(Date.now(), (day) =>
      whileChanged(`ad "${id}"`, async () => {
        const old = await this.commands.readAdState({ shard, id });
        return this.commands.deleteAd({ shard, id, expected: old.version, day, ...old });
      }),
    );
  }

  /** Ad `id`; null when there is none. */
  async ad(input: { id: string }): Promise<Ad | null> {
    const [ad] = await this.ads({ ids: [checkAdId({ argument: 'id', value: input.id })] });
    return ad ?? null;
  }

  /** Ads `ids` (null where none; ids are ones the service gave), one pipeline per shard. */
  async ads(input: { ids: readonly string[] }): Promise<(Ad | null)[]> {
    const { ids } = input;
    const day = dayOf(Date.now());
    await this.placement.ready();
    const stored = new Array<StoredAd | null>(ids.length);
    await Promise.all(
      [...this.placement.group(ids)].map(async ([shard, group]) => {
        const read = await this.commands.readAds({ shard, ids: group.ids, day });
        group.at.forEach((i, j) => (stored[i] = read[j]!));
      }),
    );
    return stored.map((s, i) => {
      if (!s) return null;
      const exhausted =
        (s.budget !== null && s.spent >= s.budget) || (s.dailyBudget !== null && s.spentToday >= s.dailyBudget);
      return { id: ids[i]!, ...s, exhausted };
    });
  }

  /**
   * Every ad's spending today (UTC) and in all, their views, and the views exploration picked (another ad than the
   * learned eCPMs would have); `explorationShare` is those over the views, null before any view.
   */
  async totals(): Promise<AdTotals> {
    const day = dayOf(Date.now());
    await this.placement.ready();
    const shards = await Promise.all(this.shards.map((shard) => this.commands.spending({ shard, day })));
    const sum = (pick: (s: (typeof shards)[number]) => number) => shards.reduce((n, s) => n + pick(s), 0);
    const views = sum((s) => s.views);
    const explored = sum((s) => s.explored);
    return {
      spentToday: sum((s) => s.spentToday),
      spent: sum((s) => s.spent),
      views,
      explored,
      explorationShare: views === 0 ? null : explored / views,
    };
  }

  /** Ads in id order, the first `first` after `after` (one deleted meanwhile is left out). */
  async list(input: { first: number; after?: string | null }): Promise<Ad[]> {
    checkPage('first', input.first, ADS_PAGE.max);
    const after = input.after == null ? null : checkAdId({ argument: 'after', value: input.after });
    await this.placement.ready();
    const ids = (
      await Promise.all(this.shards.map((shard) => this.commands.listAds({ shard, count: input.first, after })))
    )
      .flat()
      .sort((x, y) => (x < y ? -1 : 1)) // ids are ASCII: byte order, as each shard's ZRANGEBYLEX
      .slice(0, input.first);
    return (await this.ads({ ids })).filter((ad) => ad !== null);
  }

  /**
   * Picks the ad for `page` seen by `viewer` and records the view; null when no ad serves there (none indexed, or
   * all capped for the viewer or out of budget).
   */
  async targetAd(viewer: AdViewer, page: AdPage): Promise<AdTarget | null> {
    const locations = checkLocations({ argument: 'locations', value: page.locations });
    const content = checkContent({ argument: 'content', value: page.content ?? '' });
    const words = [...new Set(wordsOf(content))].slice(0, PAGE_WORDS_MAX);
    await this.placement.ready();
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    const nonce = randomBytes(12).toString('base64url');
    const args = {
      minute,
      nonce,
      viewer: viewerOf(viewer),
      locations,
      words,
      cap: this.options.frequencyCap,
      explore: this.options.exploration,
      task: this.learnTask(),
    };
    const picked = await this.onToday(now, (day) =>
      this.shards.length === 1
        ? this.commands.targetAd({ ...args, shard: this.shards[0]!, day, seed: newSeed() })
        : this.pickAndCommit({ ...args, day }),
    );
    if (!picked) return null;
    const { adId, ecpm, explored, matchedTerms } = picked;
    return { targetingId: `${minute.toString(36)}.${nonce}`, adId, ecpm, explored, matchedTerms };
  }

  /**
   * Counts a click (an action, with `action`) of a targeting on the ad it showed, once: false for an unknown,
   * expired or repeated one, or one of another ad.
   */
  async recordClick(input: AdClick): Promise<boolean> {
    const match = TARGETING_ID.exec(input.targetingId);
    if (!match || !AD_ID.test(input.adId)) return false;
    const args = {
      shard: this.shardOf(input.adId),
      minute: parseInt(match[1]!, 36),
      nonce: match[2]!,
      id: input.adId,
      action: input.action,
      task: this.learnTask(),
    };
    await this.placement.ready();
    return this.onToday(Date.now(), (day) => this.commands.recordClick({ ...args, day }));
  }

  /**
   * The worker's learning task: learns every pending ad of `shard` (of every shard when none is named) again (the
   * book's update_cpms), until `signal` aborts.
   */
  async learnPending({ signal, shard }: { signal: AbortSignal; shard?: AdShard }): Promise<void> {
    await this.placement.ready();
    for (const s of shard ? [shard] : this.shards) {
      const pending = () => this.commands.pendingAds({ shard: s, count: LEARN_BATCH });
      for (let batch = await pending(); batch.length > 0 && !signal.aborted; batch = await pending()) {
        const averages = await this.typeAverages();
        const learned = new Set<AdType>();
        for (const id of batch) {
          if (signal.aborted) return;
          const result = await whileChanged(`ad "${id}"`, async () => {
            const old = await this.commands.readAdState({ shard: s, id });
            return this.commands.learnAd({ shard: s, id, expected: old.version, ...old, averages });
          });
          if (isRefused(result)) throw new Error(`unexpected learnAd status ${result.refused}`);
          if (result) learned.add(result);
        }
        // the other shards' ads explore and index with the same averages
        const written = Object.fromEntries([...learned].map((t) => [t, averages[t]]));
        await Promise.all(
          this.shards
            .filter((o) => o !== s)
            .map((o) => this.commands.writeTypeAverages({ shard: o, averages: written })),
        );
      }
    }
  }

  /**
   * Every type's clicks (CPA: actions) per 1,000 views over all shards, a count never written counting as 1 (as
   * the book).
   */
  private async typeAverages(): Promise<Record<AdType, number>> {
    const counts = await Promise.all(this.shards.map((shard) => this.commands.typeCounts({ shard })));
    const total = (field: string) => {
      const found = counts.filter((c) => field in c);
      return found.length === 0 ? 1 : found.reduce((sum, c) => sum + c[field]!, 0);
    };
    const averages = {} as Record<AdType, number>;
    for (const t of AD_TYPES)
      averages[t] = (1000 * total(`${t}:${t === 'CPA' ? 'actions' : 'clicks'}`)) / total(`${t}:views`);
    return averages;
  }

  /** The shard of ad `id` (whose keys tests read). */
  shardOf(id: string): AdShard {
    return this.placement.of(id);
  }

  /**
   * A targeting over several shards: a pick in each (nothing written), then the best pick (by its sampled score with
   * exploration, ties to the greater id) committed in its shard, which records its view only if the viewer's cap and
   * its budgets still allow; when they do not, that shard picks again. Whatever stops between the steps leaves no
   * write: every write of a view is the commit's one script.
   */
  private async pickAndCommit(
    args: Omit<Parameters<AdCommands['pickAd']>[0], 'shard' | 'seed'>,
  ): Promise<Targeting | null | Refused> {
    const pickIn = (shard: AdShard) => this.commands.pickAd({ ...args, shard, seed: newSeed() });
    const picks = await Promise.all(this.shards.map(pickIn));
    for (let commits = 0; commits < COMMITS_MAX; commits++) {
      const refusal = picks.find(isRefused);
      if (refusal) return refusal;
      const found = picks as (Pick | null)[];
      const choice = bestOf(
        found,
        (p) => p.choice.rank,
        (p) => p.choice.adId,
      );
      if (choice === null) return null;
      const { adId } = found[choice]!.choice;
      const book =
        found[
          bestOf(
            found,
            (p) => p.book.ecpm,
            (p) => p.book.adId,
          )!
        ]!.book;
      const committed = await this.commands.commitAd({
        ...args,
        shard: this.shards[choice]!,
        seed: 1,
        adId,
        explored: adId !== book.adId,
      });
      if (committed !== null) return committed;
      picks[choice] = await pickIn(this.shards[choice]!);
    }
    this.log.warn({ commits: COMMITS_MAX }, 'ads: every commit of a targeting was refused; no ad served');
    return null;
  }

  private learnTask(): string {
    return this.queues.newTask({ name: LEARN_ADS, args: {} });
  }

  /**
   * Runs a script on the UTC day of `now`; when Redis's clock (the one every gateway shares) says another day,
   * once more on Redis's day.
   */
  private async onToday<T>(now: number, run: (day: number) => Promise<T | Refused>): Promise<T> {
    let result = await run(dayOf(now));
    if (isRefused(result) && result.refused === STATUS.WRONG_DAY) {
      const redisNow = await this.commands.nowMs();
      this.log.debug({ now, redisNow }, 'ads: this clock and Redis disagree on the day');
      result = await run(dayOf(redisNow));
    }
    if (isRefused(result)) throw new Error(`unexpected ads script status ${result.refused}`);
    return result;
  }
}

/** A seed of exploration's generator (targetAd.lua): 1 .. 2^31 - 2. */
const newSeed = () => randomInt(1, 2_147_483_647);

/** The index of the best of `picks` (null where none) by `score`, ties to the greater id; null when all are null. */
function bestOf(picks: readonly (Pick | null)[], score: (p: Pick) => number, id: (p: Pick) => string): number | null {
  let best: number | null = null;
  picks.forEach((p, i) => {
    if (p === null) return;
    const q = best === null ? null : picks[best]!;
    if (q === null || score(p) > score(q) || (score(p) === score(q) && id(p) > id(q))) best = i;
  });
  return best;
}

/** A positive amount up to AMOUNT_MAX (null when not given). */
function checkAmount({ argument, value }: Checked<number | null | undefined>): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isFinite(value) || value <= 0 || value > AMOUNT_MAX)
    throw badInput(argument, `must be a positive number of at most ${AMOUNT_MAX}`);
  return value;
}

function checkLocations({ argument, value }: Checked<readonly string[]>): string[] {
  if (value.length === 0 || value.length > LOCATIONS_MAX)
    throw badInput(argument, `must be 1 to ${LOCATIONS_MAX} locations`);
  return [...new Set(value.map((l) => userText(l, argument, LOCATION_MAX_CHARS)))];
}

function checkContent({ argument, value }: Checked<string>): string {
  const content = value.toWellFormed();
  if (content.length > AD_CONTENT_MAX_CHARS && codePoints(content) > AD_CONTENT_MAX_CHARS)
    throw badInput(argument, `must be at most ${AD_CONTENT_MAX_CHARS} characters`);
  return content;
}
