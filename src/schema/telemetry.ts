import * as resolvers from '../resolvers/telemetry.js';
import type { CounterSample } from '../services/telemetry/counters.js';
import { SEVERITIES } from '../services/telemetry/logs.js';
import type { Stats } from '../services/telemetry/stats.js';
import { builder } from './builder.js';
import { SLOWEST_PAGE } from '../services/telemetry/stats.js';

const CounterSampleType = builder.objectRef<CounterSample>('CounterSample').implement({
  description: 'How many times something happened in the slot that starts at `time`.',
  fields: (t) => ({
    time: t.expose('time', { type: 'DateTime' }),
    count: t.exposeInt('count'),
  }),
});

const StatsType = builder.objectRef<Stats>('Stats').implement({
  description: 'Samples of the current hour: count, sum, min, max, average and standard deviation.',
  fields: (t) => ({
    count: t.exposeInt('count'),
    sum: t.exposeFloat('sum'),
    min: t.exposeFloat('min'),
    max: t.exposeFloat('max'),
    average: t.exposeFloat('average'),
    stddev: t.exposeFloat('stddev'),
  }),
});

const SlowOperationType = builder.objectRef<{ name: string; averageSeconds: number }>('SlowOperation').implement({
  fields: (t) => ({ name: t.exposeString('name'), averageSeconds: t.exposeFloat('averageSeconds') }),
});

const LogSeverityType = builder.enumType('LogSeverity', { values: SEVERITIES });

const CommonLogType = builder.objectRef<{ message: string; count: number }>('CommonLog').implement({
  fields: (t) => ({ message: t.exposeString('message'), count: t.exposeInt('count') }),
});

builder.queryFields((t) => ({
  counters: t.field({
    type: ['String'],
    description: 'The names of the counters: one per operation the gateway served (`anonymous` without a name).',
    resolve: resolvers.counters,
  }),
  counter: t.field({
    type: [CounterSampleType],
    description:
      'A counter at `precision` seconds (1, 5, 60, 300, 3600, 18000 or 86400), oldest first; the newest 120 samples are kept.',
    args: { name: t.arg.string({ required: true }), precision: t.arg.int({ required: true }) },
    resolve: resolvers.counter,
  }),
  stats: t.field({
    type: StatsType,
    nullable: true,
    description:
      'This hour\'s statistic of `type` in `context`, such as context: <operation name>, type: "AccessTime" (seconds).',
    args: { context: t.arg.string({ required: true }), type: t.arg.string({ required: true }) },
    resolve: resolvers.stats,
  }),
  slowestOperations: t.field({
    type: [SlowOperationType],
    description: `The operations with the highest average access time this hour; \`first\` at most ${SLOWEST_PAGE.max}.`,
    args: { first: t.arg.int({ defaultValue: 10 }) },
    resolve: resolvers.slowestOperations,
  }),
  recentLogs: t.field({
    type: ['String'],
    description:
      'Admin: the newest lines of a log (the gateway\'s own: name "gateway", severity WARNING, ERROR or CRITICAL), newest first.',
    args: {
      name: t.arg.string({ required: true }),
      severity: t.arg({ type: LogSeverityType, defaultValue: 'INFO' }),
      first: t.arg.int({ defaultValue: 100 }),
    },
    resolve: resolvers.recentLogs,
  }),
  commonLogs: t.field({
    type: [CommonLogType],
    description: "Admin: a log's most frequent messages this hour, most frequent first.",
    args: {
      name: t.arg.string({ required: true }),
      severity: t.arg({ type: LogSeverityType, defaultValue: 'INFO' }),
      first: t.arg.int({ defaultValue: 20 }),
    },
    resolve: resolvers.commonLogs,
  }),
}));
