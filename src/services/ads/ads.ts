/**
 * Ad targeting (the book's chapter 7.3, without its defects): admins index ads for locations and words; a page's
 * targeting picks the ad with the best eCPM plus word bonuses (or a Thompson sample of it), within frequency caps
 * and budgets, and records the view in one script; a click or an action counts once per targeting; learning (the
 * book's update_cpms) runs as worker tasks, every 100th view of an ad and after its clicks. Details: docs/ads.md.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { badInput, notFound } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/ads/commands.js';
import type { AdType } from '../../redis/ads/commands.js';
import type { AdKeys } from '../../redis/ads/keys.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';
import type { QueueService } from '../coordination/queues.js';
import { wordsOf } from '../documents/text.js';
import { whileChanged } from '../shared/changes.js';
import { checkPage } from '../shared/paging.js';
import { codePoints, userText } from '../shared/text.js';

export type { AdType };
export const AD_TYPES: readonly AdType[] = ['CPC', 'CPA', 'CPM'];

export interface AdInput {
  id: string;
  locations: readonly string[];
  content: string;
  type: AdType;
  value: number;
  budget?: number | null;
  dailyBudget?: number | null;
}

/** An ad as admins see it. */
export interface Ad extends Omit<commands.StoredAd, 'spentToday'> {
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

export const LEARN_ADS = 'learn-ads';
export const LOCATIONS_MAX = 32;
export const LOCATION_MAX_CHARS = 64;
export const AD_CONTENT_MAX_CHARS = 10_000;
export const ADS_PAGE_MAX = 500;
/** A page's first this many distinct words count toward word bonuses (a long page costs no more). */
export const PAGE_WORDS_MAX = 100;
/** Values and budgets are at most this (so that 1,000 times one stays a finite, exact-enough double). */
export const AMOUNT_MAX = 1e12;
const AD_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const TARGETING_ID = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{16})$/;
/** Pending ads one learning task takes at a time. */
const LEARN_BATCH = 100;

export function parseAdId(raw: string, argument = 'id'): string {
  if (!AD_ID.test(raw)) throw badInput(argument, 'must be 1 to 64 of A-Z, a-z, 0-9, "_", ".", ":" or "-"');
  return raw;
}

/** Who a frequency cap counts: a signed-in user, else the client's address (an IPv6 client by its /64). */
export function viewerOf(username: string | null, address: string): string {
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

export class AdService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: AdKeys,
    private readonly queues: QueueService,
    private readonly options: { exploration: boolean; frequencyCap: number },
    private readonly log: Logger,
  ) {}

  /** Creates or replaces an ad (an admin's: the resolver checks); what it learned is kept. */
  async indexAd(input: AdInput): Promise<Ad> {
    const id = parseAdId(input.id, 'input.id');
    if (!AD_TYPES.includes(input.type)) throw badInput('input.type', `must be one of ${AD_TYPES.join(', ')}`);
    const value = amount('input.value', input.value)!;
    const budget = amount('input.budget', input.budget);
    const dailyBudget = amount('input.dailyBudget', input.dailyBudget);
    const locations = checkLocations(input.locations, 'input.locations');
    const terms = [...new Set(wordsOf(checkContent(input.content, 'input.content')))];
    const task = this.learnTask();
    const result = await whileChanged(`ad "${id}"`, async () => {
      const old = await commands.readAdState(this.redis, this.keys, id);
      return commands.indexAd(this.redis, this.keys, {
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
    const [ad] = await this.ads([id]);
    if (!ad) throw notFound(`ad "${id}"`); // deleted at once by another admin
    return ad;
  }

  /** Deletes an ad, what it learned and what it spent today; false when there was none. */
  async deleteAd(rawId: string): Promise<boolean> {
    const id = parseAdId(rawId);
    return this.onToday(Date.now(), (day) =>
      whileChanged(`ad "${id}"`, async () => {
        const old = await commands.readAdState(this.redis, this.keys, id);
        return commands.deleteAd(this.redis, this.keys, { id, expected: old.version, day, ...old });
      }),
    );
  }

  /** Ads `ids` (null where none), one pipeline. */
  async ads(ids: readonly string[]): Promise<(Ad | null)[]> {
    const stored = await commands.readAds(this.redis, this.keys, ids, dayOf(Date.now()));
    return stored.map((s, i) => {
      if (!s) return null;
      const { spentToday, ...ad } = s;
      const exhausted =
        (ad.budget !== null && ad.spent >= ad.budget) || (ad.dailyBudget !== null && spentToday >= ad.dailyBudget);
      return { id: ids[i]!, ...ad, exhausted };
    });
  }

  /** Ad ids in id order, the first `first` after `after`. */
  async list(first: number, after: string | null): Promise<string[]> {
    checkPage('first', first, ADS_PAGE_MAX);
    return commands.listAds(this.redis, this.keys, first, after === null ? null : parseAdId(after, 'after'));
  }

  /**
   * Picks the ad for a page seen by `viewer` (viewerOf) in any of `locations`, with its `content`, and records the
   * view; null when no ad serves there (none indexed, or all capped for the viewer or out of budget).
   */
  async targetAd(viewer: string, rawLocations: readonly string[], content: string | null): Promise<AdTarget | null> {
    const locations = checkLocations(rawLocations, 'locations');
    const words = [...new Set(wordsOf(checkContent(content ?? '', 'content')))].slice(0, PAGE_WORDS_MAX);
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    const nonce = randomBytes(12).toString('base64url');
    const args = {
      minute,
      nonce,
      viewer,
      locations,
      words,
      cap: this.options.frequencyCap,
      explore: this.options.exploration,
      seed: randomInt(1, 2_147_483_647),
      task: this.learnTask(),
    };
    const picked = await this.onToday(now, (day) => commands.targetAd(this.redis, this.keys, { ...args, day }));
    if (!picked) return null;
    const { adId, ecpm, explored, matchedTerms } = picked;
    return { targetingId: `${minute.toString(36)}.${nonce}`, adId, ecpm, explored, matchedTerms };
  }

  /**
   * Counts a click (an action, with `action`) of a targeting on the ad it showed, once: false for an unknown,
   * expired or repeated one, or one of another ad.
   */
  async recordClick(targetingId: string, rawAdId: string, action: boolean): Promise<boolean> {
    const match = TARGETING_ID.exec(targetingId);
    if (!match || !AD_ID.test(rawAdId)) return false;
    const args = {
      minute: parseInt(match[1]!, 36),
      nonce: match[2]!,
      id: rawAdId,
      action,
      task: this.learnTask(),
    };
    return this.onToday(Date.now(), (day) => commands.recordClick(this.redis, this.keys, { ...args, day }));
  }

  /** The worker's learning task: learns every pending ad again (the book's update_cpms). */
  async learnPending(signal: AbortSignal): Promise<void> {
    for (let batch = await this.pending(); batch.length > 0 && !signal.aborted; batch = await this.pending()) {
      for (const id of batch) {
        if (signal.aborted) return;
        const result = await whileChanged(`ad "${id}"`, async () => {
          const old = await commands.readAdState(this.redis, this.keys, id);
          return commands.learnAd(this.redis, this.keys, { id, expected: old.version, ...old });
        });
        if (isRefused(result)) throw new Error(`unexpected learnAd status ${result.refused}`);
      }
    }
  }

  private pending(): Promise<string[]> {
    return commands.pendingAds(this.redis, this.keys, LEARN_BATCH);
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
      const [seconds] = await this.redis.time();
      this.log.debug({ now }, 'ads: this clock and Redis disagree on the day');
      result = await run(dayOf(Number(seconds) * 1000));
    }
    if (isRefused(result)) throw new Error(`unexpected ads script status ${result.refused}`);
    return result;
  }
}

/** A positive amount up to AMOUNT_MAX (null when not given). */
function amount(argument: string, value: number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  if (!Number.isFinite(value) || value <= 0 || value > AMOUNT_MAX)
    throw badInput(argument, `must be a positive number of at most ${AMOUNT_MAX}`);
  return value;
}

function checkLocations(raw: readonly string[], argument: string): string[] {
  if (raw.length === 0 || raw.length > LOCATIONS_MAX)
    throw badInput(argument, `must be 1 to ${LOCATIONS_MAX} locations`);
  return [...new Set(raw.map((l) => userText(l, argument, LOCATION_MAX_CHARS)))];
}

function checkContent(raw: string, argument: string): string {
  const content = raw.toWellFormed();
  if (content.length > AD_CONTENT_MAX_CHARS && codePoints(content) > AD_CONTENT_MAX_CHARS)
    throw badInput(argument, `must be at most ${AD_CONTENT_MAX_CHARS} characters`);
  return content;
}
