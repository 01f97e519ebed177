/**
 * Keys of counters, statistics and logs. Counter and statistic names may come from clients (operation names): they
 * own the `count:` and `stats:` families, and the gateway's own telemetry keys live under `telemetry:`, so no name
 * can collide with them.
 */
import type { Keyspace } from '../keys.js';

export type TelemetryKeys = ReturnType<typeof telemetryKeys>;

export function telemetryKeys({ key }: Keyspace) {
  return {
    /** hash per precision (seconds): time slot start (s) → count; counter `name` of the book's chapter 5 */
    counter: (name: string, precision: number) => key('count', name, precision),
    /** sorted set, every score 0: the names of the counters (the book's `known:`), at most METRICS_NAMES_MAX */
    counterNames: () => key('telemetry', 'names'),
    /** the keys of one statistic (the book's `stats:<context>:<type>`), all on the context's slot */
    stats: (context: string, type: string) => ({
      /** sorted set: min, max, count, sum, sumsq of the current hour */
      current: key('stats', context, type),
      /** string: the hour (ms) the current statistics started */
      start: key('stats', context, type, 'start'),
      /** the previous hour's, kept when the hour rotates */
      last: key('stats', context, type, 'last'),
      lastStart: key('stats', context, type, 'pstart'),
    }),
    /**
     * sorted set: context → average of statistic `type` in the hour starting at `hour` (ms); the slowest 100 kept
     * (the book's `slowest:`), expiring with the statistics of that hour
     */
    slowest: (type: string, hour: number) => key('telemetry', 'slowest', type, hour),
    /** the keys of one log (the book's `recent:` and `common:`), all on the log's slot */
    log: (name: string, severity: string) => ({
      /** list: the newest 100 lines, newest first */
      recent: key('log', `${name}:${severity}`, 'recent'),
      /** sorted set: message → count this hour */
      common: key('log', `${name}:${severity}`, 'common'),
      /** string: the hour (ms) `common` started */
      start: key('log', `${name}:${severity}`, 'common', 'start'),
      /** the previous hour's, kept when the hour rotates */
      last: key('log', `${name}:${severity}`, 'common', 'last'),
      lastStart: key('log', `${name}:${severity}`, 'common', 'pstart'),
    }),
  };
}
