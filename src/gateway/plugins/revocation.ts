/**
 * A subscription over HTTP (SSE, or multipart, where the error is the protocol's transport error) ends with an
 * UNAUTHENTICATED error as soon as its token is revoked (in any process) or found expired, even while it started (the
 * watch begins when the stream is first pulled, and SessionService.watch looks the session up again); over WebSocket
 * the socket itself closes with 4403 (src/gateway/ws.ts).
 */
import { Repeater } from '@repeaterjs/repeater';
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../../context.js';
import { graphQLError } from '../errors.js';
import type { SessionService } from '../../services/users/sessions.js';

/** `source`, ended once `watch` calls back, after one `last` item when there is one. */
export function endWhen<T>(
  source: AsyncIterable<T>,
  watch: (callback: () => void) => () => void,
  last?: () => T,
): Repeater<T> {
  return new Repeater<T>(async (push, stop) => {
    const iterator = source[Symbol.asyncIterator]();
    const unwatch = watch(() => {
      if (last) void push(last()).catch(() => undefined);
      stop();
    });
    void stop.then(() => iterator.return?.());
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) await push(next.value);
    } finally {
      unwatch();
      stop();
    }
  });
}

export function useSessionRevocation(sessions: SessionService): Plugin<Context & { request?: Request }> {
  return {
    onSubscribe({ args }) {
      const { request, token } = args.contextValue as Context & { request?: Request };
      if (!request || !token) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          setResult(
            endWhen<ExecutionResult>(
              result,
              (callback) => sessions.watch({ token }, callback),
              () => ({ errors: [graphQLError('UNAUTHENTICATED', 'session revoked or expired')] }),
            ),
          );
        },
      };
    },
  };
}
