import * as resolvers from '../resolvers/telemetry.js';
import { PRECISIONS, SAMPLE_COUNT, type CounterSample } from '../services/telemetry/counters.js';
import {
  COMMON_PAGE,
  DEFAULT_SEVERITY,
  GATEWAY_LOG,
  GATEWAY_SEVERITIES,
  RECENT_PAGE,
  SEVERITIES,
} from '../services/telemetry/logs.js';
import { ACCESS_TIME } from '../services/telemetry/metrics.js';
import { SLOWEST_PAGE, type Stats } from '../services/telemetry/stats.js';
import { firstArg } from './args.js';
import { builder } from './builder.js';

/** "a, b or c". */
const either = (values: readonly (string | number)[]) => `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;

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
  counters: t.withAuth({ signedIn: true }).field({
    type: ['String'],
    description: 'The names of the counters: one per operation the gateway served (`anonymous` without a name).',
    resolve: resolvers.counters,
  }),
  counter: t.withAuth({ signedIn: true }).field({
    type: [CounterSampleType],
    description: `A counter at \`precision\` seconds (${either(PRECISIONS)}), oldest first; the newest ${SAMPLE_COUNT} samples are kept. Counts reach Redis every METRICS_FLUSH_MS and a read may be that much older again (the shared cache).`,
    args: { name: t.arg.string({ required: true }), precision: t.arg.int({ required: true }) },
    resolve: resolvers.counter,
  }),
  stats: t.withAuth({ signedIn: true }).field({
    type: StatsType,
    nullable: true,
    description: `This hour's statistic of \`type\` in \`context\`, such as context: <operation name>, type: "${ACCESS_TIME}" (seconds); like \`counter\`, up to two METRICS_FLUSH_MS behind the operations.`,
    args: { context: t.arg.string({ required: true }), type: t.arg.string({ required: true }) },
    resolve: resolvers.stats,
  }),
  slowestOperations: t.withAuth({ signedIn: true }).field({
    type: [SlowOperationType],
    description: 'The operations with the highest average access time this hour.',
    args: { first: firstArg(t.arg, SLOWEST_PAGE) },
    resolve: resolvers.slowestOperations,
  }),
  recentLogs: t.withAuth({ admin: true }).field({
    type: ['String'],
    description: `Admin: the newest lines of a log (the gateway's own: name "${GATEWAY_LOG}", severity ${either(GATEWAY_SEVERITIES)}), newest first.`,
    args: {
      name: t.arg.string({ required: true }),
      severity: t.arg({ type: LogSeverityType, required: true, defaultValue: DEFAULT_SEVERITY }),
      first: firstArg(t.arg, RECENT_PAGE),
    },
    resolve: resolvers.recentLogs,
  }),
  commonLogs: t.withAuth({ admin: true }).field({
    type: [CommonLogType],
    description: "Admin: a log's most frequent messages this hour, most frequent first.",
    args: {
      name: t.arg.string({ required: true }),
      severity: t.arg({ type: LogSeverityType, required: true, defaultValue: DEFAULT_SEVERITY }),
      first: firstArg(t.arg, COMMON_PAGE),
    },
    resolve: resolvers.commonLogs,
  }),
}));
