/**
 * Keys of ad targeting, by shard: an ad lives in one shard (docs/ads.md "Keys"), and every key of a shard is on the
 * shard's slot (`ads:{<tag>}:...`, and its learning queue `queue:{<tag>}:...`), so that indexing, a shard's pick, a
 * view, a click and learning are each one script. Per-ad numbers are columns (one hash per attribute, ad id → value),
 * so a targeting reads an attribute of every candidate in one command. Ad words never share a key with document
 * words (`docs:...`).
 */
import { coordinationKeys } from '../coordination/keys.js';
import type { Keyspace } from '../keys.js';

export type AdKeys = ReturnType<typeof adKeys>;

/**
 * Shard n's hash tag, also the name of its learning queue: `ads`, then `ads-1`, `ads-2`, ... The first three's slots
 * (9537, 14142, 1885) fall in the three thirds of the slot space, one on each master of a cluster whose slots are
 * split evenly over three (what `redis-cli --cluster create` does; test/ads/cluster.test.ts checks it).
 */
export function adShardTag(n: number): string {
  return n === 0 ? 'ads' : `ads-${n}`;
}

export function adKeys(space: Keyspace, tag: string = adShardTag(0)) {
  const k = (...parts: string[]) => space.key('ads', tag, ...parts);
  const { ready, delayed } = coordinationKeys(space).queue(tag);
  return {
    /** the name of the shard's learning queue (its hash tag) */
    adQueue: tag,
    /** the shard's learning queue's ready and delayed tasks (src/redis/coordination/keys.ts) */
    queueReady: ready,
    queueDelayed: delayed,
    /** sorted set, every score 0: the ad ids (listed by id) */
    ids: k('ids'),
    /** hash: locations (JSON), terms (space-separated), ver (the change counter at the ad's last change) */
    meta: (id: string) => k('meta', id),
    /** string, in the first shard: how many shards the ads were placed in (ADS_SHARDS) */
    adShardCount: k('shardCount'),
    /** string: the change counter, one for every ad of the shard, so that a version never comes back after a delete */
    version: k('version'),
    /** sorted set: ad id → its learned eCPM (the book's idx:ad:value:) */
    ecpm: k('ecpm'),
    /** hash, ad id → "<type> <value>" */
    profiles: k('profiles'),
    /** hashes, ad id → its total budget, its daily budget (absent: none) */
    budgets: k('budgets'),
    dailyBudgets: k('dailyBudgets'),
    /** hashes, ad id → a count: views, clicks, actions, events (what its eCPM learns from: clicks, actions for CPA) */
    views: k('views'),
    clicks: k('clicks'),
    actions: k('actions'),
    events: k('events'),
    /** hash, ad id → the price of every event charged to it */
    spent: k('spent'),
    /** hash, ad id → spent on UTC day `day` (days since 1970); lives two days */
    daily: (day: number) => k('daily', String(day)),
    /** hashes, "<ad id> <word>" → views, clicks, actions of the ad on pages having its word */
    wordViews: k('wordViews'),
    wordClicks: k('wordClicks'),
    wordActions: k('wordActions'),
    /**
     * hash: "<TYPE>:views|clicks|actions" → counts of the shard's ads of a type; "<TYPE>:avg" → the clicks per 1,000
     * views of every ad of the type (of all shards: written by learning)
     */
    typeStats: k('typeStats'),
    /**
     * hash, ad id → its card (type, value, eCPM and bonus range, packed by src/redis/lib/ads.lua): the ads of a
     * location (the book's idx:req:<location>), with what targeting reads of each
     */
    location: (location: string) => k('location', location),
    /** sorted set: ad id → the word's bonus to the ad's eCPM (the book's idx:<word>) */
    word: (word: string) => k('word', word),
    /** set: the words some ad of the shard has (a page's other words are not looked up) */
    vocabulary: k('vocabulary'),
    /** hash, ad id → views by one viewer on UTC day `day`; lives until the day is over */
    seen: (day: number, viewer: string) => k('seen', String(day), viewer),
    /** hash: the targetings of one minute, "<nonce>" → "<ad id> <ms> <matched words>", "<nonce>:c|a" → counted */
    targetings: (minute: number) => k('targetings', String(minute)),
    /** set: ads whose eCPMs are due to be learned again (one learning task runs while it is not empty) */
    learnPending: k('learnPending'),
  };
}
