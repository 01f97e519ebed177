/**
 * Structured logs: one pino logger per process, JSON lines on stdout with ISO timestamps. Each operation,
 * HTTP or WebSocket, logs through a child logger carrying its request id (`ctx.log`), and yoga's line about
 * an error it masked carries the id of the request that raised it (src/gateway/errors.ts). There is no
 * AsyncLocalStorage: on Node 20 it makes every promise of the process pay for async hooks, about a tenth of
 * the gateway's CPU while it delivers messages.
 * Warnings and worse also go to a LogForward, which hands them to the Redis logs (recentLogs, commonLogs)
 * once the services exist.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

type Sink = (level: number, message: string) => void;

/** A pino destination for lines at warn and above; lines before `attach` (and telemetry's own) are dropped. */
export class LogForward {
  private sink: Sink | undefined;

  attach(sink: Sink): void {
    this.sink = sink;
  }

  write(line: string): void {
    if (!this.sink) return;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; telemetry?: boolean };
      if (typeof entry.level === 'number' && typeof entry.msg === 'string' && !entry.telemetry)
        this.sink(entry.level, entry.msg);
    } catch {
      // not a JSON line: nothing to forward
    }
  }
}

/**
 * The arguments of the Redis commands that errors name (ioredis sets `command` on its errors; a cluster's error holds
 * its last node's, an aggregate error its parts'), removed from every line: they can hold a password (HELLO 3 AUTH
 * user password), a session token or a user's text. The command's name stays.
 */
const REDACTED = [
  'err.command.args',
  'err.*.command.args',
  'err.aggregateErrors[*].command.args',
  'err.errors[*].command.args',
];

export function createLogger(level: string, forward?: LogForward): Logger {
  const options = {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { pid: process.pid },
    redact: { paths: REDACTED, remove: true },
  };
  if (!forward || level === 'silent') return pino(options);
  return pino(
    options,
    pino.multistream([
      { level, stream: process.stdout },
      { level: 'warn', stream: forward },
    ]),
  );
}
