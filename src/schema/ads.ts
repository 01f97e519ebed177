import * as resolvers from '../resolvers/ads.js';
import type { AdRef } from '../resolvers/ads.js';
import {
  AD_CONTENT_MAX_CHARS,
  AD_ID_CHARS,
  AD_ID_MAX_CHARS,
  AD_TYPES,
  ADS_PAGE,
  AMOUNT_MAX,
  CLICK_ACTION_DEFAULT,
  LOCATION_MAX_CHARS,
  LOCATIONS_MAX,
  type AdTarget,
  type AdTotals,
  type AdType,
} from '../services/ads/ads.js';
import { enumValues, firstArg } from './args.js';
import { builder } from './builder.js';

const TYPE_DESCRIPTIONS = {
  CPC: 'Paid per click: eCPM = 1000 * value * clicks / views.',
  CPA: 'Paid per action: eCPM = 1000 * value * actions / views.',
  CPM: 'Paid per 1,000 views: eCPM = value.',
} satisfies Record<AdType, string>;

const AdTypeType = builder.enumType('AdType', {
  values: enumValues(AD_TYPES, TYPE_DESCRIPTIONS),
});

const LOCATIONS = `1-${LOCATIONS_MAX} locations (non-empty, at most ${LOCATION_MAX_CHARS} characters each)`;
const CONTENT = `At most ${AD_CONTENT_MAX_CHARS} characters`;

const AdInputType = builder.inputType('AdInput', {
  fields: (t) => ({
    id: t.id({ required: true, description: `1-${AD_ID_MAX_CHARS} of [${AD_ID_CHARS}].` }),
    locations: t.stringList({ required: true, description: `${LOCATIONS} it serves.` }),
    content: t.string({ required: true, description: `${CONTENT}; its words earn bonuses on pages having them.` }),
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
  fields: (t) => {
    const admin = t.withAuth({ admin: true });
    return {
      id: t.exposeID('id'),
      type: t.field({ type: AdTypeType, resolve: resolvers.adField('type') }),
      locations: t.stringList({ resolve: resolvers.adField('locations') }),
      terms: t.stringList({
        description: 'The words of its content that earn bonuses.',
        resolve: resolvers.adField('terms'),
      }),
      value: admin.float({ description: `Its price.${ADMIN}`, resolve: resolvers.adField('value') }),
      ecpm: admin.float({
        description: `Its learned eCPM, without word bonuses.${ADMIN}`,
        resolve: resolvers.adField('ecpm'),
      }),
      views: admin.int({ description: ADMIN.trim(), resolve: resolvers.adField('views') }),
      clicks: admin.int({ description: ADMIN.trim(), resolve: resolvers.adField('clicks') }),
      actions: admin.int({ description: ADMIN.trim(), resolve: resolvers.adField('actions') }),
      spent: admin.float({
        description: `The price of every event charged.${ADMIN}`,
        resolve: resolvers.adField('spent'),
      }),
      spentToday: admin.float({
        description: `What it spent this UTC day (what dailyBudget bounds).${ADMIN}`,
        resolve: resolvers.adField('spentToday'),
      }),
      budget: admin.float({ nullable: true, description: ADMIN.trim(), resolve: resolvers.adField('budget') }),
      dailyBudget: admin.float({
        nullable: true,
        description: ADMIN.trim(),
        resolve: resolvers.adField('dailyBudget'),
      }),
      exhausted: admin.boolean({
        description: `Its budget or today's is spent: it does not serve.${ADMIN}`,
        resolve: resolvers.adField('exhausted'),
      }),
    };
  },
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

const AdTotalsType = builder.objectRef<AdTotals>('AdTotals').implement({
  description: 'Every ad together.',
  fields: (t) => ({
    spentToday: t.exposeFloat('spentToday', { description: 'Spent this UTC day.' }),
    spent: t.exposeFloat('spent', { description: 'Spent in all.' }),
    views: t.exposeInt('views'),
    explored: t.exposeInt('explored', {
      description: 'Views that exploration picked: another ad than the learned eCPMs would have (ADS_EXPLORATION).',
    }),
    explorationShare: t.exposeFloat('explorationShare', {
      nullable: true,
      description: '`explored` over `views`; null before any view.',
    }),
  }),
});

builder.queryFields((t) => ({
  adTotals: t.withAuth({ admin: true }).field({
    type: AdTotalsType,
    description: `What every ad spent, today and in all, and exploration's share of their views.${ADMIN}`,
    resolve: resolvers.adTotals,
  }),
  ad: t.withAuth({ admin: true }).field({
    type: AdObject,
    nullable: true,
    description: `An ad; null when there is none.${ADMIN}`,
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.ad,
  }),
  ads: t.withAuth({ admin: true }).field({
    type: [AdObject],
    description: `Ads by id, the first \`first\` after \`after\`.${ADMIN}`,
    args: { first: firstArg(t.arg, ADS_PAGE), after: t.arg.id() },
    resolve: resolvers.ads,
  }),
  targetAd: t.field({
    type: AdTargetType,
    nullable: true,
    description:
      'The ad for a page in any of `locations` with `content`, its view recorded; null when no ad serves there. For anyone, signed in or not.',
    args: {
      locations: t.arg.stringList({ required: true, description: `${LOCATIONS}.` }),
      content: t.arg.string({ description: `${CONTENT}.` }),
    },
    resolve: resolvers.targetAd,
  }),
}));

builder.mutationFields((t) => ({
  indexAd: t.withAuth({ admin: true }).field({
    type: AdObject,
    description: `Creates or replaces an ad; what it learned is kept.${ADMIN}`,
    args: { input: t.arg({ type: AdInputType, required: true }) },
    resolve: resolvers.indexAd,
  }),
  deleteAd: t.withAuth({ admin: true }).field({
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
      action: t.arg.boolean({ required: true, defaultValue: CLICK_ACTION_DEFAULT }),
    },
    resolve: resolvers.recordClick,
  }),
}));
