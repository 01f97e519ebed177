/**
 * Structured logs: one pino logger per process, JSON lines on stdout with ISO timestamps. Every line
 * written while an HTTP request is handled carries that request's id (AsyncLocalStorage), including the
 * lines yoga itself writes; WebSocket operations log through a child logger that carries theirs.
 * Warnings and worse also go to a LogForward, which hands them to the Redis logs (recentLogs, commonLogs)
 * once the services exist.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

export type { Logger };

export const requestScope = new AsyncLocalStorage<{ requestId: string }>();

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
      if (typeof entry.level === 'number' && typeof entry.msg === 'string' && !entry.telemetry) this.sink(entry.level, entry.msg);
    } catch {
      // not a JSON line: nothing to forward
    }
  }
}

export function createLogger(level: string, forward?: LogForward): Logger {
  const options = {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { pid: process.pid },
    mixin: () => requestScope.getStore() ?? {},
  };
  if (!forward || level === 'silent') return pino(options);
  return pino(options, pino.multistream([{ level, stream: process.stdout }, { level: 'warn', stream: forward }]));
}
