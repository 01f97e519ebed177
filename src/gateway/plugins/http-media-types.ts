/**
 * Requests whose media types the gateway cannot serve get a GraphQL error body with a code and what to send, where
 * yoga answers with an empty or a puzzling body: a POST body that is not JSON, multipart or form data, or JSON sent
 * as a form (415), and a subscription over HTTP whose Accept header takes no event stream (406; before its resolver
 * runs, so signed in or not alike).
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const unsupported = (status: number, message: string) =>
  createGraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status } } });

const JSON_PLEASE =
  "content-type: send application/json (curl: -H 'content-type: application/json'), or multipart/form-data for uploads";
const FORM_JSON =
  "content-type: this JSON body came as a form (application/x-www-form-urlencoded, what curl -d sends): send application/json (curl: -H 'content-type: application/json')";

const isForm = (request: Request) =>
  request.headers.get('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded') ?? false;

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
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method !== 'POST') return;
      if (!requestParser) throw unsupported(415, JSON_PLEASE);
      if (!isForm(request)) return;
      // A JSON body sent as a form (what `curl -d` does) would get yoga's "Must provide query string."
      setRequestParser(async (form) => {
        if (/^\s*[{[]/.test(await form.clone().text())) throw unsupported(415, FORM_JSON);
        return requestParser(form);
      });
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
