/**
 * Structured logs: one pino logger per process, JSON lines on stdout with ISO timestamps. Every line
 * written while an HTTP request is handled carries that request's id (AsyncLocalStorage), including the
 * lines yoga itself writes; WebSocket operations log through a child logger that carries theirs.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';

export type { Logger };

export const requestScope = new AsyncLocalStorage<{ requestId: string }>();

export function createLogger(level: string): Logger {
  return pino({
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { pid: process.pid },
    mixin: () => requestScope.getStore() ?? {},
  });
}
