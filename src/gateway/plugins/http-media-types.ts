/**
 * Requests whose media types the gateway cannot serve get a GraphQL error body with a code and what to send, where
 * yoga answers with an empty or a puzzling body: a POST body that is not JSON, multipart or form data, or JSON sent
 * as a form (415), a subscription over HTTP whose Accept header takes neither of the gateway's HTTP subscription
 * formats (406; before its resolver runs, so signed in or not alike), and an incremental result (`@defer`, `@stream`)
 * asked for by a client that takes no stream (406).
 */
import { createGraphQLError, isAsyncIterable, processRegularResult, type Plugin } from 'graphql-yoga';

const unsupported = (status: number, message: string) =>
  createGraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status } } });

const JSON_PLEASE =
  "content-type: send application/json (curl: -H 'content-type: application/json'), or multipart/form-data for uploads";
const FORM_JSON =
  "content-type: this JSON body came as a form (application/x-www-form-urlencoded, what curl -d sends): send application/json (curl: -H 'content-type: application/json')";

const isForm = (request: Request) =>
  request.headers.get('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded') ?? false;

/** How a subscription over HTTP is answered: SSE (graphql-yoga's) or Apollo's multipart subscriptions (spec 1.0). */
export type HttpSubscriptionTransport = 'sse' | 'multipart';

const EVENT_STREAM_RANGES = new Set(['text/event-stream', 'text/*', '*/*']);
const SUBSCRIPTION_SPEC = /^subscriptionspec="?1\.0"?$/;

/**
 * The transport of the first range of an Accept header that names one (a missing header takes anything: SSE):
 * `multipart/mixed` with `subscriptionSpec=1.0` (what Apollo Client's HttpLink sends) is multipart; text/event-stream,
 * text/* or *\/* is SSE. Undefined when it takes neither.
 */
export function httpSubscriptionTransport(accept: string | null): HttpSubscriptionTransport | undefined {
  if (!accept) return 'sse';
  for (const range of accept.toLowerCase().split(',')) {
    const [type, ...params] = range.split(';').map((part) => part.replace(/\s/g, ''));
    if (type === 'multipart/mixed' && params.some((param) => SUBSCRIPTION_SPEC.test(param))) return 'multipart';
    if (EVENT_STREAM_RANGES.has(type!)) return 'sse';
  }
  return undefined;
}

const SUBSCRIPTION_FORMATS =
  'accept: subscriptions over HTTP answer with text/event-stream (SSE) or multipart/mixed;subscriptionSpec="1.0" (Apollo Client\'s HttpLink); or use WebSocket';
const INCREMENTAL_FORMATS =
  'accept: @defer and @stream answer in parts, with multipart/mixed or text/event-stream; or leave them out';

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
      if (!request || httpSubscriptionTransport(request.headers.get('accept'))) return;
      setResultAndStopExecution({ errors: [unsupported(406, SUBSCRIPTION_FORMATS)] });
    },
    onResultProcess(payload) {
      // Parts that no processor takes (a @defer query asked with accept: application/json): yoga's 406 has no body.
      if (payload.resultProcessor || !isAsyncIterable(payload.result)) return;
      void payload.result[Symbol.asyncIterator]().return?.();
      payload.setResult({ errors: [unsupported(406, INCREMENTAL_FORMATS)] });
      payload.setResultProcessor(processRegularResult, 'application/json');
    },
  };
}
