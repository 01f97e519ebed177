/**
 * Apollo's multipart HTTP subscriptions (subscriptionSpec 1.0), which Apollo Client's HttpLink, Apollo Kotlin and
 * Apollo iOS speak without a WebSocket: a subscription POSTed with `accept: multipart/mixed;subscriptionSpec=1.0`
 * is answered with one `multipart/mixed;boundary="graphql";subscriptionSpec="1.0"` response whose parts are
 * `{"payload": <result>}` for each result, `{}` heartbeats every `heartbeatMs` (from the start, so proxies and clients
 * see the stream open), and, when the stream ends on an error that is no result (a revoked session, a failure of the
 * stream itself), `{"payload": null, "errors": [...]}` before the closing boundary.
 *
 * graphql-yoga's own multipart answer is the incremental-delivery one (boundary `-`, bare results, no heartbeats) and
 * yoga 5 refuses it for subscriptions; no published plugin frames Apollo's protocol, so this one does. A refusal
 * before the stream starts (no token, not a member) is no stream: yoga answers it as JSON, with the status of its
 * code as application/graphql-response+json (what Apollo Client asks for after multipart) and 200 as
 * application/json (plugins/refusals.ts); Apollo Client reads both as GraphQL errors with their codes.
 */
import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type FetchAPI, type Plugin } from 'graphql-yoga';
import type { Logger } from '../../logger.js';
import { maskError } from '../errors.js';
import { httpSubscriptionTransport } from './http-media-types.js';

const BOUNDARY = 'graphql';
const MEDIA_TYPE = `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec="1.0"`;
const PART_HEAD = `\r\n--${BOUNDARY}\r\ncontent-type: application/json; charset=utf-8\r\n\r\n`;
const CLOSE = `\r\n--${BOUNDARY}--\r\n`;
const HEARTBEAT = '{}';

/** Transport-level errors carry neither locations nor a path (the protocol's words). */
const transportErrors = (errors: readonly GraphQLError[]) =>
  errors.map(({ message, extensions }) => ({ message, extensions }));

/** A result without `data` is an error raised outside execution (GraphQL's response format): it ends the stream. */
const isRequestError = (result: ExecutionResult) => !('data' in result) && Boolean(result.errors?.length);

function multipartResponse(
  result: AsyncIterable<ExecutionResult, undefined>,
  fetchAPI: FetchAPI,
  { heartbeatMs, log }: { heartbeatMs: number; log: Logger },
): Response {
  const encoder = new fetchAPI.TextEncoder();
  const part = (body: string) => encoder.encode(PART_HEAD + body);
  const iterator = result[Symbol.asyncIterator]();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const stream = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(part(HEARTBEAT));
      heartbeat = setInterval(() => {
        // Only while the client reads: a heartbeat is for an idle stream, not to queue behind unread parts.
        if ((controller.desiredSize ?? 0) > 0) controller.enqueue(part(HEARTBEAT));
      }, heartbeatMs);
    },
    async pull(controller) {
      let last: string | undefined;
      try {
        const { done, value } = await iterator.next();
        if (!done && !isRequestError(value)) {
          controller.enqueue(part(JSON.stringify({ payload: value })));
          return;
        }
        if (!done) last = JSON.stringify({ payload: null, errors: transportErrors(value.errors!) });
      } catch (err) {
        log.error({ err }, 'a multipart subscription failed');
        const error = maskError(err, 'Unexpected error.') as GraphQLError;
        last = JSON.stringify({ payload: null, errors: transportErrors([error]) });
      }
      clearInterval(heartbeat);
      if (last) {
        controller.enqueue(part(last));
        void iterator.return?.();
      }
      controller.enqueue(encoder.encode(CLOSE));
      controller.close();
    },
    async cancel() {
      clearInterval(heartbeat);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(stream, {
    status: 200,
    headers: { 'content-type': MEDIA_TYPE, 'cache-control': 'no-cache' },
  });
}

/**
 * Answers the subscriptions whose Accept header asks for Apollo's multipart format first. It must come before
 * useHttpMediaTypes, which answers 406 to a stream that no processor took.
 */
export function useMultipartSubscriptions(options: { heartbeatMs: number; log: Logger }): Plugin {
  const subscriptions = new WeakSet<Request>();
  return {
    onSubscribe({ args }) {
      const { request } = args.contextValue as { request?: Request };
      if (request) subscriptions.add(request);
    },
    onResultProcess(payload) {
      const { request, result } = payload;
      if (!subscriptions.has(request) || !isAsyncIterable(result)) return;
      if (httpSubscriptionTransport(request.headers.get('accept')) !== 'multipart') return;
      payload.setResultProcessor(
        (stream, fetchAPI) => multipartResponse(stream as AsyncIterable<ExecutionResult, undefined>, fetchAPI, options),
        'multipart/mixed',
      );
    },
  };
}
