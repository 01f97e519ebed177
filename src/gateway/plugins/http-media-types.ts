/**
 * Requests whose media types the gateway cannot serve get a GraphQL error body with a code, where yoga answers
 * with an empty body: a POST body that is not JSON, multipart or form data (415), and a subscription over HTTP
 * whose Accept header takes no event stream (406; before its resolver runs, so signed in or not alike).
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const unsupported = (status: number, message: string) =>
  createGraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status } } });

/** Whether an Accept header takes text/event-stream (a missing one takes anything). */
function acceptsEventStream(accept: string | null): boolean {
  if (!accept) return true;
  return accept
    .toLowerCase()
    .split(',')
    .some((range) => ['text/event-stream', 'text/*', '*/*'].includes(range.split(';')[0]!.trim()));
}

export function useHttpMediaTypes(): Plugin<{ request?: Request }> {
  return {
    onRequestParse({ request, requestParser }) {
      if (requestParser || request.method !== 'POST') return;
      throw unsupported(415, 'content-type: send application/json (or multipart/form-data for uploads)');
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request || acceptsEventStream(request.headers.get('accept'))) return;
      setResultAndStopExecution({
        errors: [
          unsupported(406, 'accept: subscriptions over HTTP answer with text/event-stream (SSE); or use WebSocket'),
        ],
      });
    },
  };
}
