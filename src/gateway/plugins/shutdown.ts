/**
 * A stop ends the subscriptions served over HTTP (SSE, distinct connections or graphql-sse's single connection, and
 * multipart) the way their transport ends a stream, so that the gateway's stop does not wait for them: SSE with a
 * `complete` event, multipart with the closing boundary (graphql-sse.ts then ends its streams once their operations
 * are complete). A subscription over WebSocket is left to its socket, which the stop closes with 1001 (src/gateway/
 * ws.ts): a client reconnects and subscribes again after a 1001, not after a `complete`.
 */
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { endWhen } from './revocation.js';

/** Calls `callback` once `signal` aborts (at once if it has); returns what stops waiting for it. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => undefined;
  }
  signal.addEventListener('abort', callback, { once: true });
  return () => signal.removeEventListener('abort', callback);
}

export function useStreamsEndOnStop(stopping: AbortSignal): Plugin<{ request?: Request }> {
  return {
    onSubscribe({ args }) {
      // An operation over HTTP has its request; one over WebSocket has none.
      if (!(args.contextValue as { request?: Request }).request) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result))
            setResult(endWhen<ExecutionResult>(result, (callback) => onAbort(stopping, callback)));
        },
      };
    },
  };
}
