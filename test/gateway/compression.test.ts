/**
 * Compressed answers: GraphiQL's page (about 9 MB as yoga renders it) compressed once and served from memory by
 * Accept-Encoding, with Vary and an ETag that makes a revisit a 304; JSON answers of COMPRESS_MIN_BYTES or more
 * compressed, smaller ones not; an SSE stream asked with `accept-encoding: gzip` still delivers its events as they
 * come (never held in a compressor's buffer). Requests go through node:http, which, unlike fetch, neither asks for
 * an encoding nor decodes one by itself.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { createChat, MESSAGE_ADDED } from '../support/chats.js';

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request as sent, and the answer's bytes as received. */
function raw(
  url: string,
  { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const decode = (r: Raw): Buffer =>
  r.headers['content-encoding'] === 'br'
    ? brotliDecompressSync(r.body)
    : r.headers['content-encoding'] === 'gzip'
      ? gunzipSync(r.body)
      : r.body;

const HTML = { accept: 'text/html,application/xhtml+xml' };

/** POSTs a GraphQL request through node:http. */
const post = (t: TestApp, query: string, headers: Record<string, string> = {}) =>
  raw(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query }),
  });

describe('GraphiQL’s page', () => {
  it('is served whole without Accept-Encoding, and as br or gzip when accepted: the same page, with Vary and an ETag', async () => {
    const t = await startTestApp();
    const identity = await raw(t.url, { headers: HTML });
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(identity.headers.vary).toBe('Accept-Encoding');
    expect(identity.headers['cache-control']).toBe('no-cache');
    expect(Number(identity.headers['content-length'])).toBe(identity.body.length);
    const page = identity.body.toString();
    expect(page).toContain('<title>Redis in Action gateway</title>');

    const sizes: Record<string, number> = { identity: identity.body.length };
    for (const [accepted, encoding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip, deflate, br, zstd', 'br'],
    ] as const) {
      const r = await raw(t.url, { headers: { ...HTML, 'accept-encoding': accepted } });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(encoding);
      expect(r.headers.vary).toBe('Accept-Encoding');
      expect(r.headers.etag).not.toBe(identity.headers.etag);
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      expect(decode(r).toString()).toBe(page);
      sizes[encoding] = r.body.length;
    }
    // The page compresses to well under a third of itself.
    expect(sizes.br).toBeLessThan(sizes.identity! / 3);
    expect(sizes.gzip).toBeLessThan(sizes.identity! / 3);
    console.log(`GraphiQL's page: ${JSON.stringify(sizes)} bytes`);
  });

  it('is the same cached page at /graphql/, the trailing slash yoga also serves', async () => {
    const t = await startTestApp();
    const headers = { ...HTML, 'accept-encoding': 'gzip' };
    const [page, slashed] = [await raw(t.url, { headers }), await raw(`${t.url}/`, { headers })];
    expect(slashed.status).toBe(200);
    expect(slashed.headers['content-encoding']).toBe('gzip');
    expect(slashed.headers.etag).toBe(page.headers.etag);
    expect(decode(slashed).toString()).toBe(decode(page).toString());
  });

  it('answers a revisit with the ETag it gave 304 and no body', async () => {
    const t = await startTestApp();
    const headers = { ...HTML, 'accept-encoding': 'gzip, deflate, br' };
    const first = await raw(t.url, { headers });
    const again = await raw(t.url, { headers: { ...headers, 'if-none-match': first.headers.etag! } });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(first.headers.etag);
    // Another encoding's ETag is another representation: the page is sent.
    const other = await raw(t.url, { headers: { ...HTML, 'if-none-match': first.headers.etag! } });
    expect(other.status).toBe(200);
    expect(other.headers['content-encoding']).toBeUndefined();
  });
});

describe('JSON answers', () => {
  it('compresses one of COMPRESS_MIN_BYTES or more as accepted, and decodes to the same answer', async () => {
    const t = await startTestApp();
    const QUERY = '{ __schema { types { name description } } }';
    const plain = await post(t, QUERY);
    expect(plain.body.length).toBeGreaterThan(t.config.limits.compressMinBytes);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    for (const encoding of ['gzip', 'br']) {
      const r = await post(t, QUERY, { 'accept-encoding': encoding });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(encoding);
      expect(r.headers.vary).toBe('Accept-Encoding');
      expect(r.body.length).toBeLessThan(plain.body.length / 2);
      expect(JSON.parse(decode(r).toString())).toEqual(JSON.parse(plain.body.toString()));
    }
  });

  it('leaves a small one, { me } among them, as it is', async () => {
    const t = await startTestApp();
    const user = await t.signUp();
    const r = await post(t, '{ me { username } }', {
      'accept-encoding': 'gzip, br',
      authorization: `Bearer ${user.token}`,
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(r.body.toString())).toEqual({ data: { me: { username: user.username } } });
    // The threshold is the setting: with 0, even { me } is compressed.
    const all = await startTestApp({ COMPRESS_MIN_BYTES: '0' });
    const compressed = await post(all, '{ __typename }', { 'accept-encoding': 'gzip' });
    expect(compressed.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decode(compressed).toString())).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('event streams', () => {
  it('delivers an SSE event asked with accept-encoding: gzip as it comes, uncompressed', async () => {
    const t = await startTestApp({ COMPRESS_MIN_BYTES: '0' });
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hello');
    const event = await new Promise<{ headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const req = httpRequest(
        t.url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            'accept-encoding': 'gzip',
            authorization: `Bearer ${bob.token}`,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => {
            text += chunk.toString();
            // The stream stays open: the event arrives while it does, not when it ends.
            if (text.includes('hello')) {
              resolve({ headers: res.headers, text });
              req.destroy();
            }
          });
          res.on('end', () => reject(new Error(`the stream ended before its event: ${text}`)));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ query: MESSAGE_ADDED, variables: { c: chatId } }));
    });
    expect(event.headers['content-type']).toMatch(/^text\/event-stream/);
    // yoga marks the stream `none`, so that proxies do not compress it either.
    expect(event.headers['content-encoding'] ?? 'none').toBe('none');
    expect(event.text).toMatch(/event: next\ndata: .*"text":"hello"/);
  });
});
