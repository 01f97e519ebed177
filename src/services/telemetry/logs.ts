/**
 * Logs in Redis (the book's chapter 5 log_recent and log_common): per log name and severity, the newest 100
 * lines and a count per message for the current hour (the previous hour kept; the 1000 most frequent messages of
 * each, of at most 1000 characters). Lines are buffered in memory and written by `flush()`, one script per log.
 */
import type { TelemetryCommands } from '../../redis/telemetry/commands.js';
import { hourStart } from '../shared/clock.js';
import { checkPage, type Page } from '../shared/paging.js';
import { checkName } from './names.js';

/** The severities of a log (the GraphQL enum LogSeverity), least severe first. */
export const SEVERITIES = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** The severity a log is read at when none is asked for. */
export const DEFAULT_SEVERITY: Severity = 'INFO';
/** Lines kept in a recent log. */
export const RECENT_KEPT = 100;
/** Distinct messages counted in a common log per hour (the most frequent kept). */
export const COMMON_KEPT = 1000;
/** A page of a recent log: at most all it keeps. */
export const RECENT_PAGE: Page = { default: RECENT_KEPT, max: RECENT_KEPT };
/** A page of a common log's most frequent messages. */
export const COMMON_PAGE: Page = { default: 20, max: 100 };
/** Characters kept of one message. */
export const MESSAGE_MAX = 1000;
/** Lines buffered per log between flushes; more are dropped (a log storm must not eat the process's memory). */
const PENDING_MAX = 1000;

/** The lowest pino level of each severity: trace and debug, info, warn, error, fatal. */
const PINO_LEVEL = { DEBUG: 0, INFO: 30, WARNING: 40, ERROR: 50, CRITICAL: 60 } satisfies Record<Severity, number>;

/** The severity of a pino level. */
export function severityOf(pinoLevel: number): Severity {
  let severity: Severity = SEVERITIES[0];
  for (const s of SEVERITIES) if (pinoLevel >= PINO_LEVEL[s]) severity = s;
  return severity;
}

/** The log the gateway's own warnings and errors go to. */
export const GATEWAY_LOG = 'gateway';
/** The severities of the gateway log: those of pino's warn and above, which the process's LogForward hands on. */
export const GATEWAY_SEVERITIES = SEVERITIES.filter((s) => PINO_LEVEL[s] >= PINO_LEVEL.WARNING);

/** Where a LogForward hands the process's warnings and errors: the `gateway` log. */
export function gatewayLogSink(logs: LogService): (pinoLevel: number, message: string) => void {
  return (level, message) => logs.log({ name: GATEWAY_LOG, severity: severityOf(level), message });
}

export interface LogDeps {
  commands: TelemetryCommands;
  /** The clock (ms) of the lines' times and of the hour. */
  now: () => number;
}

/** A log: its name and the severity of its lines. */
export interface LogName {
  name: string;
  severity: Severity;
}

export class LogService {
  private pending = new Map<string, { name: string; severity: Severity; lines: string[] }>();
  private readonly commands: TelemetryCommands;
  private readonly now: () => number;

  constructor(deps: LogDeps) {
    ({ commands: this.commands, now: this.now } = deps);
  }

  /** Adds a line to a log, in memory until the next flush (a message over MESSAGE_MAX characters is cut). */
  log({ name, severity, message: fullMessage }: LogName & { message: string }): void {
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
        return this.commands.writeLog({
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

  /** The newest `first` lines, newest first. */
  async recent({ name, severity, first }: LogName & { first: number }): Promise<string[]> {
    checkPage('first', first, RECENT_PAGE.max);
    checkName('name', name);
    return this.commands.recentLog({ name, severity, first });
  }

  /** This hour's `first` most frequent messages, most frequent first. */
  async common({ name, severity, first }: LogName & { first: number }): Promise<{ message: string; count: number }[]> {
    checkPage('first', first, COMMON_PAGE.max);
    checkName('name', name);
    return this.commands.commonLog({ name, severity, first });
  }
}
