/**
 * MAX_REQUEST_BYTES for every request but file uploads. yoga has one body limit for all requests, set to the
 * larger upload limit; this plugin holds other requests to MAX_REQUEST_BYTES the way yoga's own limit does: by
 * the declared Content-Length, and by counting a streamed body as it is read.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const tooLarge = () => createGraphQLError('Request body too large', { extensions: { http: { status: 413 }, code: 'BAD_USER_INPUT' } });

export function useBodyLimitOutsideUploads(limit: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (request.headers.get('content-type')?.toLowerCase().startsWith('multipart/form-data')) return;
      const declared = request.headers.get('content-length');
      if (declared !== null && Number(declared) > limit) throw tooLarge();
      if (!requestParser || !request.body) return;
      setRequestParser((req) => {
        let read = 0;
        const counted = req.body!.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              read += chunk.byteLength;
              if (read > limit) controller.error(tooLarge());
              else controller.enqueue(chunk);
            },
          }),
        );
        // @ts-expect-error duplex is needed to send a stream body and missing from the types
        return requestParser(new fetchAPI.Request(req.url, { method: req.method, headers: req.headers, signal: req.signal, body: counted, duplex: 'half' }));
      });
    },
  };
}
