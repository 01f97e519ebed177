/**
 * A refused operation answers with the status of its code (gateway/errors.ts#httpStatusOf: 400, 401, 403, 404, 409,
 * 429, 503) wherever the GraphQL-over-HTTP spec asks for a 4xx: over SSE (text/event-stream, POST or GET, its coded
 * error in the stream's `next` event) and as application/graphql-response+json (what Apollo Client 4's HttpLink and
 * urql ask for first, subscriptions included). yoga answered those 500: it counts an error whose `originalError` is
 * not a GraphQL error (our AppError) as unexpected when the result has no `data`, and its SSE answer ignores the
 * statuses yoga gives with `http.spec` (validation: 400). As application/json a refusal answers 200 (the spec's
 * §6.4.1, and Apollo Client reads an application/json answer of 300 or more as a bare ServerError, losing the code),
 * where yoga said 500; the statuses yoga gives it otherwise (a persisted query's 404) are kept.
 *
 * A refusal is a single result without `data` (the operation never ran: its subscription was refused, its context
 * failed, its document was invalid) or a rate limit's refusal before parsing. An operation that ran (`data`, even
 * null) keeps yoga's status, and so does an error with a status of its own (`extensions.http.status`: 406, 415,
 * 413, a persisted query's 404). A 429 whose wait is known (the rate limit's `retryAfter`: seconds to its window's end)
 * also carries `Retry-After`.
 */
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { httpStatusOf } from '../errors.js';
import { wasRefusedEarly, type RateLimitedContext } from './limits.js';

interface Refusal {
  status: number;
  retryAfter: unknown;
}

function refusalOf(result: unknown, serverContext: object): Refusal | undefined {
  if (wasRefusedEarly(serverContext)) {
    const early = (serverContext as RateLimitedContext).earlyRefusal;
    return { status: httpStatusOf('BUSY')!, retryAfter: early?.extensions.retryAfter };
  }
  if (isAsyncIterable(result) || Array.isArray(result)) return undefined;
  const { data, errors } = result as ExecutionResult;
  if (data !== undefined || !errors?.length) return undefined;
  const { extensions } = errors[0]!;
  // A status of the error's own (406, 415, 413, a persisted query's 404), not the spec's default: yoga gives it.
  const http = extensions?.http;
  if (http?.status && !http.spec) return undefined;
  const status = httpStatusOf(extensions?.code);
  return status ? { status, retryAfter: extensions.retryAfter } : undefined;
}

/** The status of a refusal's answer in `mediaType`, or undefined to keep yoga's. */
function statusIn(mediaType: string, refusal: Refusal, yogas: number): number | undefined {
  if (mediaType === 'text/event-stream' || mediaType === 'application/graphql-response+json') return refusal.status;
  if (mediaType === 'application/json' && yogas === 500) return 200;
  return undefined;
}

export function useRefusalStatus(): Plugin {
  const refusals = new WeakMap<Request, Refusal>();
  return {
    onResultProcess({ request, result, serverContext }) {
      const refusal = refusalOf(result, serverContext);
      if (refusal) refusals.set(request, refusal);
    },
    onResponse(payload) {
      const { request, response, fetchAPI } = payload;
      const refusal = refusals.get(request);
      if (!refusal) return;
      const mediaType = response.headers.get('content-type')?.split(';')[0]!.trim() ?? '';
      const status = statusIn(mediaType, refusal, response.status);
      if (!status) return;
      const headers = new fetchAPI.Headers(response.headers);
      if (status === 429 && Number.isInteger(refusal.retryAfter))
        headers.set('retry-after', String(refusal.retryAfter));
      payload.setResponse(new fetchAPI.Response(response.body, { status, headers }));
    },
  };
}
