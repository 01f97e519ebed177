/**
 * GraphiQL's page (what yoga renders with `@graphql-yoga/render-graphiql`, everything inlined: about 9 MB) served
 * compressed and cached: rendered by yoga at the first visit, compressed then once with Brotli (quality 9, about
 * 1.9 MB) and gzip (about 2.4 MB) on the thread pool, and kept in memory; every visit gets the bytes its
 * Accept-Encoding prefers, with `Vary: Accept-Encoding` and a strong ETag per encoding, and `Cache-Control:
 * no-cache`, so a browser that has the page asks again and gets 304 with no body. The page never changes while the
 * process runs (its options are fixed), so nothing is compressed per request.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import NegotiatorImpl from 'negotiator';

/** Brotli's quality for the page: 9 compresses it in about 1.7 s once (11 would take some 20 s for 8% less). */
const BROTLI_QUALITY = 9;
const ENCODINGS = ['br', 'gzip', 'identity'] as const;
type Encoding = (typeof ENCODINGS)[number];

/** negotiator 0.6's `encoding(available, preferred)`: the second argument orders equal q (its types lack it). */
const Negotiator = NegotiatorImpl as unknown as new (req: IncomingMessage) => {
  encoding(available: string[], preferred: string[]): string | undefined;
};
const PREFERRED = ['br', 'gzip'];

interface Representation {
  body: Buffer;
  etag: string;
}

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

async function compressPage(html: string): Promise<Record<Encoding, Representation>> {
  const identity = Buffer.from(html);
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 27);
  const [br, gz] = await Promise.all([
    brotli(identity, {
      params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
    }),
    gzipped(identity, { level: constants.Z_BEST_COMPRESSION }),
  ]);
  return {
    br: { body: br, etag: `"${hash}-br"` },
    gzip: { body: gz, etag: `"${hash}-gzip"` },
    identity: { body: identity, etag: `"${hash}"` },
  };
}

/** Whether a request asks for GraphiQL's page (yoga's own test: a GET accepting text/html). */
export const wantsGraphiQL = (req: IncomingMessage): boolean =>
  req.method === 'GET' && req.headers.accept?.includes('text/html') === true;

/** Serves the page `render` gives (called once, at the first visit). */
export function graphiqlPage(
  render: () => Promise<string>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  let page: Promise<Record<Encoding, Representation>> | undefined;
  return async (req, res) => {
    const representations = await (page ??= render()
      .then(compressPage)
      .catch((err: unknown) => {
        page = undefined; // the next visit tries again
        throw err;
      }));
    // Equal q (a browser's `gzip, deflate, br, zstd`): br, the smaller.
    const encoding = (new Negotiator(req).encoding([...ENCODINGS], PREFERRED) ?? 'identity') as Encoding;
    const { body, etag } = representations[encoding];
    const headers = {
      'content-type': 'text/html; charset=utf-8',
      vary: 'Accept-Encoding',
      etag,
      'cache-control': 'no-cache',
    };
    if (req.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    res
      .writeHead(200, {
        ...headers,
        ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
        'content-length': body.length,
      })
      .end(body);
  };
}
