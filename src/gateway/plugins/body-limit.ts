/**
 * Request body limits, in place of yoga's single one (maxRequestBodySize: false): file uploads (multipart) up to
 * `uploads`, every other request up to `others` (MAX_REQUEST_BYTES). A declared Content-Length is checked as it
 * is (Node's HTTP parser reads no more than it); only a body without one (chunked) is counted as it is read,
 * where yoga's own limit wrapped every body in a counting stream.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const tooLarge = () =>
  createGraphQLError('Request body too large', { extensions: { http: { status: 413 }, code: 'BAD_USER_INPUT' } });

export function useBodyLimits(limits: { uploads: number; others: number }): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const multipart = request.headers.get('content-type')?.toLowerCase().startsWith('multipart/form-data');
      const limit = multipart ? limits.uploads : limits.others;
      const declared = request.headers.get('content-length');
      if (declared !== null) {
        if (!/^\d+$/.test(declared) || Number(declared) > limit) throw tooLarge();
        return; // Node's HTTP parser reads no more than the declared length: nothing to count
      }
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
        // duplex is needed to send a stream body, and missing from the types
        const init = { method: req.method, headers: req.headers, signal: req.signal, body: counted, duplex: 'half' };
        return requestParser(new fetchAPI.Request(req.url, init));
      });
    },
  };
}
