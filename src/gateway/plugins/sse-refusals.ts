/**
 * A refused operation over SSE (text/event-stream, POST or GET) answers with the status of its code
 * (gateway/errors.ts#httpStatusOf: 400, 401, 403, 404, 409, 429, 503), its coded error still in the stream's `next`
 * event, where yoga answered 500: yoga's SSE processor counts an error whose `originalError` is not a GraphQL error
 * (our AppError) as unexpected when the result has no `data`, and ignores the statuses yoga itself gives with
 * `http.spec` (validation: 400). A refusal is a single result without `data` (the operation never ran: its
 * subscription was refused, its context failed, its document was invalid) or a rate limit's refusal before parsing.
 * Only the status changes, and only of event-stream answers: JSON answers keep the statuses of the GraphQL-over-HTTP
 * spec (yoga's), and an operation that ran (`data`, even null) keeps 200.
 */
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { httpStatusOf } from '../errors.js';
import { wasRefusedEarly } from './limits.js';

function refusalStatus(result: unknown, serverContext: object): number | undefined {
  if (wasRefusedEarly(serverContext)) return httpStatusOf('BUSY');
  if (isAsyncIterable(result) || Array.isArray(result)) return undefined;
  const { data, errors } = result as ExecutionResult;
  if (data !== undefined || !errors?.length) return undefined;
  return httpStatusOf(errors[0]!.extensions?.code);
}

export function useSseRefusalStatus(): Plugin {
  const statuses = new WeakMap<Request, number>();
  return {
    onResultProcess({ request, result, serverContext }) {
      const status = refusalStatus(result, serverContext);
      if (status) statuses.set(request, status);
    },
    onResponse(payload) {
      const { request, response, fetchAPI } = payload;
      const status = statuses.get(request);
      if (!status || !response.headers.get('content-type')?.startsWith('text/event-stream')) return;
      payload.setResponse(new fetchAPI.Response(response.body, { status, headers: response.headers }));
    },
  };
}
