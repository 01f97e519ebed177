/**
 * Logs in Redis (the book's chapter 5 log_recent and log_common): per log name and severity, the newest 100
 * lines and a count per message for the current hour (the previous hour kept; the 1000 most frequent messages of
 * each, of at most 1000 characters). Lines are buffered in memory and written by `flush()`, one script per log.
 */
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/telemetry/commands.js';
import type { TelemetryKeys } from '../../redis/telemetry/keys.js';
import { hourStart } from '../shared/clock.js';
import { pairs } from '../../redis/replies.js';

export const SEVERITIES = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** Lines kept in a recent log. */
export const RECENT_KEPT = 100;
/** Distinct messages counted in a common log per hour (the most frequent kept). */
export const COMMON_KEPT = 1000;
/** Characters kept of one message. */
export const MESSAGE_MAX = 1000;
/** Lines buffered per log between flushes; more are dropped (a log storm must not eat the process's memory). */
const PENDING_MAX = 1000;

/** The severity of a pino level: warn, error, fatal (and below warn: debug, info). */
export function severityOf(pinoLevel: number): Severity {
  return pinoLevel >= 60
    ? 'CRITICAL'
    : pinoLevel >= 50
      ? 'ERROR'
      : pinoLevel >= 40
        ? 'WARNING'
        : pinoLevel >= 30
          ? 'INFO'
          : 'DEBUG';
}

/** The log the gateway's own warnings and errors go to. */
export const GATEWAY_LOG = 'gateway';

/** Where a LogForward hands the process's warnings and errors: the `gateway` log. */
export function gatewayLogSink(logs: LogService): (pinoLevel: number, message: string) => void {
  return (level, message) => logs.log(GATEWAY_LOG, severityOf(level), message);
}

export class LogService {
  private pending = new Map<string, { name: string; severity: Severity; lines: string[] }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: TelemetryKeys,
    private readonly now: () => number = Date.now,
  ) {}

  log(name: string, severity: Severity, fullMessage: string): void {
    const message = fullMessage.length > MESSAGE_MAX ? `${fullMessage.slice(0, MESSAGE_MAX)}…` : fullMessage;
    const id = `${name}\n${severity}`;
    const entry = this.pending.get(id) ?? { name, severity, lines: [] };
    this.pending.set(id, entry);
    // Pairs: the recent line (with its time, as the book's) and the message counted in the common log.
    if (entry.lines.length < 2 * PENDING_MAX)
      entry.lines.push(`${new Date(this.now()).toISOString()} ${message}`, message);
  }

  /** Writes the buffered lines; on failure they are kept (up to the buffer's bound) for the next flush. */
  async flush(): Promise<void> {
    const pending = [...this.pending.values()];
    if (pending.length === 0) return;
    this.pending = new Map();
    const hour = hourStart(this.now());
    const results = await Promise.allSettled(
      pending.map(({ name, severity, lines }) => {
        return commands.writeLog(this.redis, this.keys, {
          name,
          severity,
          hour,
          recentKept: RECENT_KEPT,
          commonKept: COMMON_KEPT,
          lines,
        });
      }),
    );
    const failed = results.findIndex((r) => r.status === 'rejected');
    if (failed < 0) return;
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') continue;
      const { name, severity, lines } = pending[i]!;
      const entry = this.pending.get(`${name}\n${severity}`) ?? { name, severity, lines: [] };
      entry.lines = [...lines, ...entry.lines].slice(0, 2 * PENDING_MAX);
      this.pending.set(`${name}\n${severity}`, entry);
    }
    throw (results[failed] as PromiseRejectedResult).reason;
  }

  /** The newest lines, newest first. */
  async recent(name: string, severity: Severity, first: number): Promise<string[]> {
    if (first === 0) return [];
    return this.redis.lrange(this.keys.log(name, severity).recent, 0, first - 1);
  }

  /** This hour's most frequent messages, most frequent first. */
  async common(name: string, severity: Severity, first: number): Promise<{ message: string; count: number }[]> {
    if (first === 0) return [];
    const raw = await this.redis.zrevrange(this.keys.log(name, severity).common, 0, first - 1, 'WITHSCORES');
    return pairs(raw).map(([message, count]) => ({ message, count }));
  }
}
