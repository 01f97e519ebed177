import * as resolvers from '../resolvers/ads.js';
import type { AdRef } from '../resolvers/ads.js';
import {
  AD_CONTENT_MAX_CHARS,
  AD_TYPES,
  ADS_PAGE,
  AMOUNT_MAX,
  CLICK_ACTION_DEFAULT,
  LOCATION_MAX_CHARS,
  LOCATIONS_MAX,
  type AdTarget,
  type AdType,
} from '../services/ads/ads.js';
import { builder } from './builder.js';

const TYPE_DESCRIPTIONS: Record<AdType, string> = {
  CPC: 'Paid per click: eCPM = 1000 * value * clicks / views.',
  CPA: 'Paid per action: eCPM = 1000 * value * actions / views.',
  CPM: 'Paid per 1,000 views: eCPM = value.',
};

const AdTypeType = builder.enumType('AdType', {
  values: Object.fromEntries(AD_TYPES.map((t) => [t, { description: TYPE_DESCRIPTIONS[t] }])) as Record<
    AdType,
    { description: string }
  >,
});

const AdInputType = builder.inputType('AdInput', {
  fields: (t) => ({
    id: t.id({ required: true, description: '1-64 of [A-Za-z0-9_.:-].' }),
    locations: t.stringList({
      required: true,
      description: `1-${LOCATIONS_MAX} locations (non-empty, at most ${LOCATION_MAX_CHARS} characters each) it serves.`,
    }),
    content: t.string({
      required: true,
      description: `At most ${AD_CONTENT_MAX_CHARS} characters; its words earn bonuses on pages having them.`,
    }),
    type: t.field({ type: AdTypeType, required: true }),
    value: t.float({
      required: true,
      description: `The price of one click, action, or 1,000 views; positive, at most ${AMOUNT_MAX}.`,
    }),
    budget: t.float({ description: `The most it spends in all; positive, at most ${AMOUNT_MAX}. None: no limit.` }),
    dailyBudget: t.float({
      description: `The most it spends a UTC day; positive, at most ${AMOUNT_MAX}. None: no limit.`,
    }),
  }),
});

const ADMIN = ' Admins only (FORBIDDEN for others).';

const AdObject = builder.objectRef<AdRef>('Ad').implement({
  description: 'An ad. What it earns and spends is for admins only.',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.field({ type: AdTypeType, resolve: resolvers.adField('type') }),
    locations: t.stringList({ resolve: resolvers.adField('locations') }),
    terms: t.stringList({
      description: 'The words of its content that earn bonuses.',
      resolve: resolvers.adField('terms'),
    }),
    value: t.float({ description: `Its price.${ADMIN}`, resolve: resolvers.adminField('value') }),
    ecpm: t.float({
      description: `Its learned eCPM, without word bonuses.${ADMIN}`,
      resolve: resolvers.adminField('ecpm'),
    }),
    views: t.int({ description: ADMIN.trim(), resolve: resolvers.adminField('views') }),
    clicks: t.int({ description: ADMIN.trim(), resolve: resolvers.adminField('clicks') }),
    actions: t.int({ description: ADMIN.trim(), resolve: resolvers.adminField('actions') }),
    spent: t.float({
      description: `The price of every event charged.${ADMIN}`,
      resolve: resolvers.adminField('spent'),
    }),
    budget: t.float({ nullable: true, description: ADMIN.trim(), resolve: resolvers.adminField('budget') }),
    dailyBudget: t.float({ nullable: true, description: ADMIN.trim(), resolve: resolvers.adminField('dailyBudget') }),
    exhausted: t.boolean({
      description: `Its budget or today's is spent: it does not serve.${ADMIN}`,
      resolve: resolvers.adminField('exhausted'),
    }),
  }),
});

const AdTargetType = builder.objectRef<AdTarget>('AdTarget').implement({
  fields: (t) => ({
    targetingId: t.exposeID('targetingId', { description: 'What recordClick names; valid 15 minutes.' }),
    ad: t.field({ type: AdObject, resolve: resolvers.targetedAd }),
    ecpm: t.exposeFloat('ecpm', { description: "The ad's eCPM on this page, with the bonus of the words it has." }),
    matchedTerms: t.exposeStringList('matchedTerms', { description: "The page's words the ad has." }),
    explored: t.exposeBoolean('explored', {
      description: 'Thompson sampling picked another ad than the learned eCPMs would have (ADS_EXPLORATION).',
    }),
  }),
});

builder.queryFields((t) => ({
  ad: t.field({
    type: AdObject,
    nullable: true,
    description: `An ad; null when there is none.${ADMIN}`,
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.ad,
  }),
  ads: t.field({
    type: [AdObject],
    description: `Ads by id, the first \`first\` (at most ${ADS_PAGE.max}) after \`after\`.${ADMIN}`,
    args: { first: t.arg.int({ defaultValue: ADS_PAGE.default }), after: t.arg.id() },
    resolve: resolvers.ads,
  }),
  targetAd: t.field({
    type: AdTargetType,
    nullable: true,
    description:
      'The ad for a page in any of `locations` with `content`, its view recorded; null when no ad serves there. For anyone, signed in or not.',
    args: { locations: t.arg.stringList({ required: true }), content: t.arg.string() },
    resolve: resolvers.targetAd,
  }),
}));

builder.mutationFields((t) => ({
  indexAd: t.field({
    type: AdObject,
    description: `Creates or replaces an ad; what it learned is kept.${ADMIN}`,
    args: { input: t.arg({ type: AdInputType, required: true }) },
    resolve: resolvers.indexAd,
  }),
  deleteAd: t.field({
    type: 'Boolean',
    description: `Deletes an ad and what it learned; false when there was none.${ADMIN}`,
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.deleteAd,
  }),
  recordClick: t.field({
    type: 'Boolean',
    description:
      'Counts a click (with `action: true`, an action) of a targeting on its ad, once; false for an unknown, expired (15 minutes), repeated or mismatched one. For anyone.',
    args: {
      targetingId: t.arg.id({ required: true }),
      adId: t.arg.id({ required: true }),
      action: t.arg.boolean({ defaultValue: CLICK_ACTION_DEFAULT }),
    },
    resolve: resolvers.recordClick,
  }),
}));
