/**
 * Request body limits, in place of yoga's single one (maxRequestBodySize: false): file uploads (multipart from a
 * caller who may upload: an admin) up to `uploads`, every other request up to `others` (MAX_REQUEST_BYTES), a
 * multipart one from anybody else included. A declared Content-Length is checked as it
 * is (Node's HTTP parser reads no more than it); only a body without one (chunked) is counted as it is read,
 * where yoga's own limit wrapped every body in a counting stream.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const tooLarge = () =>
  createGraphQLError('Request body too large', { extensions: { http: { status: 413 }, code: 'BAD_USER_INPUT' } });

/**
 * `request` with its body bounded to `limit` bytes: a declared Content-Length over it throws at once (Node's HTTP
 * parser reads no more than it declares, so it is not counted); a body without one (chunked) is counted as it is
 * read, its stream failing with the same error past the limit. Also for requests served before yoga parses them
 * (plugins/graphql-sse.ts).
 */
export function boundedRequest(request: Request, limit: number, fetchAPI: { Request: typeof Request }): Request {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\d+$/.test(declared) || Number(declared) > limit) throw tooLarge();
    return request;
  }
  if (!request.body) return request;
  let read = 0;
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  // duplex is needed to send a stream body, and missing from the types
  const init = {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    body: counted,
    duplex: 'half',
  };
  return new fetchAPI.Request(request.url, init);
}

export function useBodyLimits(limits: {
  uploads: number;
  others: number;
  /** Whether the caller of a multipart request may upload (false when that cannot be told). */
  mayUpload: (serverContext: object, request: Request) => Promise<boolean>;
}): Plugin {
  const bound = ({ request, requestParser, setRequestParser, fetchAPI }: RequestParse, limit: number) => {
    // Without a parser nothing reads the body here: only a declared length is checked.
    if (!requestParser && !request.headers.has('content-length')) return;
    const bounded = boundedRequest(request, limit, fetchAPI);
    if (bounded !== request && requestParser) setRequestParser(() => requestParser(bounded));
  };
  return {
    onRequestParse(parse) {
      const multipart = parse.request.headers.get('content-type')?.toLowerCase().startsWith('multipart/form-data');
      if (!multipart) return bound(parse, limits.others);
      return limits
        .mayUpload(parse.serverContext, parse.request)
        .catch(() => false)
        .then((may) => bound(parse, may ? limits.uploads : limits.others));
    },
  };
}

type RequestParse = Parameters<NonNullable<Plugin['onRequestParse']>>[0];
