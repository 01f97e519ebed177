import * as resolvers from '../resolvers/ops.js';
import { builder } from './builder.js';
import { CONFIG_MAX_BYTES, CONFIG_MAX_DEPTH } from '../services/ops/ops.js';
import type { CacheCounts, Count, ProcessFigures } from '../services/ops/figures.js';
import { RATE_LIMITS } from '../services/ops/limits.js';

const CountType = builder.objectRef<Count>('NamedCount').implement({
  description: 'A count under a name (a transport, a rate limit).',
  fields: (t) => ({ name: t.exposeString('name'), count: t.exposeFloat('count') }),
});

const CacheCountsType = builder.objectRef<CacheCounts>('CacheCounts').implement({
  description:
    'What one cache of this process counted since it started (`gateway_cache_*_total` of /metrics, labelled by cache).',
  fields: (t) => ({
    name: t.exposeString('name'),
    memoryHits: t.exposeFloat('memoryHits', { description: "Answered from this process's memory." }),
    redisHits: t.exposeFloat('redisHits', { description: 'Answered from the shared entry in Redis.' }),
    misses: t.exposeFloat('misses'),
    computations: t.exposeFloat('computations', { description: 'Values this process computed.' }),
    processWaits: t.exposeFloat('processWaits', { description: 'Waited for a computation in this process.' }),
    deploymentWaits: t.exposeFloat('deploymentWaits', { description: "Waited for another process's computation." }),
    negativeHits: t.exposeFloat('negativeHits', { description: 'Answered absent by a negative entry.' }),
    bloomRefusals: t.exposeFloat('bloomRefusals', { description: 'Answered absent by the Bloom filter.' }),
  }),
});

const GatewayFiguresType = builder.objectRef<ProcessFigures>('GatewayFigures').implement({
  description:
    'The figures of the one gateway process that answered (hostname and pid say which), since it started: the values GET /metrics prints, read from the same registry. Counters only grow: a rate is the difference of two readings of the same process over the time between them. Deployment-wide figures are the counters in Redis (`counter`, `stats`).',
  fields: (t) => ({
    hostname: t.exposeString('hostname'),
    pid: t.exposeInt('pid'),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    readAt: t.expose('readAt', { type: 'DateTime' }),
    connections: t.exposeInt('connections', { description: 'Open connections, HTTP and WebSocket.' }),
    websockets: t.exposeInt('websockets', { description: 'Open graphql-ws sockets.' }),
    subscriptions: t.expose('subscriptions', {
      type: [CountType],
      description: 'Live subscriptions by transport (ws, sse).',
    }),
    operations: t.exposeFloat('operations', { description: 'Operations served (METRICS=off: 0).' }),
    pollerReads: t.exposeFloat('pollerReads', {
      description: "The mailbox poller's reads of watched heads: one Redis round trip per node each.",
    }),
    pollerHeadsRead: t.exposeFloat('pollerHeadsRead', { description: 'Heads those reads read.' }),
    doorbellRings: t.exposeFloat('doorbellRings', { description: 'Doorbell rings heard (sharded pub/sub).' }),
    watchedHeads: t.exposeInt('watchedHeads', { description: 'Mailbox heads the poller watches.' }),
    caches: t.expose('caches', { type: [CacheCountsType] }),
    rateLimitRefusals: t.expose('rateLimitRefusals', {
      type: [CountType],
      description: `Refusals with BUSY by rate limit, every limit listed (0 until it refuses): ${Object.keys(RATE_LIMITS).join(', ')}.`,
    }),
    redisCommands: t.exposeFloat('redisCommands', {
      description: "Commands this process's Redis clients sent, each once (however often ioredis resent it).",
    }),
    redisRoundTrips: t.exposeFloat('redisRoundTrips', {
      description: 'Round trips of those commands: one per command sent alone, one per pipeline or MULTI.',
    }),
    redisCommandsByClient: t.expose('redisCommandsByClient', {
      type: [CountType],
      description: 'Those commands by client role (gateway, doorbells, replica-waits, redlock, worker, …).',
    }),
  }),
});

builder.queryFields((t) => ({
  gatewayFigures: t.withAuth({ admin: true }).field({
    type: GatewayFiguresType,
    description: 'Admin: the live figures of the gateway process that answers (what its GET /metrics prints).',
    resolve: resolvers.gatewayFigures,
  }),
  maintenance: t.field({
    type: 'Boolean',
    description: 'Whether maintenance mode is on (mutations paused).',
    resolve: resolvers.maintenance,
  }),
  config: t.withAuth({ admin: true }).field({
    type: 'JSON',
    nullable: true,
    description: 'Admin: the configuration of one component, null when none is set.',
    args: { type: t.arg.string({ required: true }), component: t.arg.string({ required: true }) },
    resolve: resolvers.config,
  }),
}));

builder.mutationFields((t) => ({
  setMaintenance: t.withAuth({ admin: true }).field({
    type: 'Boolean',
    description: 'Admin: turns maintenance mode on or off; every gateway instance follows within about a second.',
    args: { enabled: t.arg.boolean({ required: true }) },
    resolve: resolvers.setMaintenance,
  }),
  setConfig: t.withAuth({ admin: true }).field({
    type: 'JSON',
    description: `Admin: stores the configuration of one component (at most ${CONFIG_MAX_BYTES / 1024} KiB of JSON, nested at most ${CONFIG_MAX_DEPTH} deep) and returns it.`,
    args: {
      type: t.arg.string({ required: true }),
      component: t.arg.string({ required: true }),
      value: t.arg({ type: 'JSON', required: true }),
    },
    resolve: resolvers.setConfig,
  }),
}));
