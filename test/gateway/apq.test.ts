/**
 * Automatic persisted queries (APQ): with the clients users use (Apollo Client's PersistedQueryLink, urql's
 * persistedExchange), over POST, GET and graphql-ws, across two gateway processes sharing one Redis; unknown and
 * mismatching hashes; the store's bounds (document size, entries with least-recently-used eviction) against a flood;
 * the document and rate limits on persisted documents.
 */
import { createHash } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client as UrqlClient, fetchExchange, subscriptionExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { describe, expect, it } from 'vitest';
import { startTestApp, uniquePrefix, wsClient, type TestApp } from '../support/app.js';
import { createChat, send } from '../support/chats.js';
import { keysOf } from '../support/keys.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

interface Sent {
  method: string;
  /** Whether the request carried the document (else the hash alone). */
  withQuery: boolean;
  status: number;
}

/** fetch, recording each request's method and whether it carried the query. */
function recordingFetch(sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const body = request.method === 'POST' ? ((await request.clone().json()) as { query?: string }) : {};
    const response = await fetch(request);
    sent.push({
      method: request.method,
      withQuery: Boolean(url.searchParams.get('query') ?? body.query),
      status: response.status,
    });
    return response;
  };
}

/** Two gateway processes on one Redis (one KEY_PREFIX), and what else `env` says. */
async function twoApps(env: Record<string, string> = {}): Promise<[TestApp, TestApp, string]> {
  const prefix = uniquePrefix();
  const a = await startTestApp({ KEY_PREFIX: prefix, ...env });
  const b = await startTestApp({ KEY_PREFIX: prefix, ...env });
  return [a, b, prefix];
}

/** POSTs (or GETs) an APQ request: the hash, and the query when given. */
async function apq(
  t: TestApp,
  { hash, query, get = false, token }: { hash: string; query?: string; get?: boolean; token?: string },
): Promise<{
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  let response: Response;
  if (get) {
    const url = new URL(t.url);
    if (query) url.searchParams.set('query', query);
    url.searchParams.set('extensions', JSON.stringify(persisted(hash)));
    response = await fetch(url, { headers });
  } else {
    response = await fetch(t.url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query, extensions: persisted(hash) }),
    });
  }
  return { status: response.status, ...((await response.json()) as object) };
}

/** The documents the store holds (the hash's entries and the last-use sorted set's, which must agree). */
async function stored(t: TestApp, prefix: string): Promise<{ documents: number; lastUse: number }> {
  const k = keysOf(prefix);
  const [documents, lastUse] = await Promise.all([
    t.redis.hlen(k.persistedDocuments()),
    t.redis.zcard(k.persistedLastUse()),
  ]);
  return { documents, lastUse };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Apollo Client PersistedQueryLink', () => {
  it('registers through one process, then runs by hash alone on another, over POST and GET', async () => {
    const [a, b] = await twoApps();
    const user = await a.signUp();
    const query = gql('query ApolloMe { me { username } }');
    const client = (t: TestApp, sent: Sent[], useGETForHashedQueries: boolean) =>
      new ApolloClient({
        link: new PersistedQueryLink({ sha256, useGETForHashedQueries }).concat(
          new HttpLink({ uri: t.url, headers: { authorization: `Bearer ${user.token}` }, fetch: recordingFetch(sent) }),
        ),
        cache: new InMemoryCache(),
      });

    const first: Sent[] = [];
    const onA = client(a, first, false);
    const r1 = await onA.query<{ me: { username: string } }>({ query, fetchPolicy: 'network-only' });
    expect(r1.data?.me.username).toBe(user.username);
    // The hash alone (unknown: PersistedQueryNotFound), then the query with its hash, which registers it.
    expect(first.map((s) => [s.method, s.withQuery])).toEqual([
      ['POST', false],
      ['POST', true],
    ]);
    await onA.query({ query, fetchPolicy: 'network-only' });
    expect(first.slice(2).map((s) => [s.method, s.withQuery])).toEqual([['POST', false]]);

    // Another process knows it from Redis: one GET with the hash alone.
    const second: Sent[] = [];
    const onB = client(b, second, true);
    const r2 = await onB.query<{ me: { username: string } }>({ query, fetchPolicy: 'network-only' });
    expect(r2.data?.me.username).toBe(user.username);
    expect(second.map((s) => [s.method, s.withQuery, s.status])).toEqual([['GET', false, 200]]);
    onA.stop();
    onB.stop();
  });
});

describe('urql persistedExchange', () => {
  it('registers over GET through one process, then runs by hash alone on another', async () => {
    const [a, b] = await twoApps();
    const user = await a.signUp();
    const client = (t: TestApp, sent: Sent[]) =>
      new UrqlClient({
        url: t.url,
        fetch: recordingFetch(sent),
        fetchOptions: { headers: { authorization: `Bearer ${user.token}` } },
        exchanges: [persistedExchange({ preferGetForPersistedQueries: true }), fetchExchange],
      });
    const ME = 'query UrqlMe { me { id username } }';

    const first: Sent[] = [];
    const r1 = await client(a, first).query<{ me: { username: string } }>(ME, {}).toPromise();
    expect(r1.error).toBeUndefined();
    expect(r1.data?.me.username).toBe(user.username);
    expect(first.map((s) => [s.method, s.withQuery])).toEqual([
      ['GET', false],
      ['GET', true],
    ]);

    const second: Sent[] = [];
    const r2 = await client(b, second).query<{ me: { username: string } }>(ME, {}).toPromise();
    expect(r2.data?.me.username).toBe(user.username);
    expect(second.map((s) => [s.method, s.withQuery, s.status])).toEqual([['GET', false, 200]]);
  });

  it('persists subscriptions over graphql-ws: the hash alone, registered by the first client through another process', async () => {
    const [a, b, prefix] = await twoApps();
    const [ann, bob] = await Promise.all([a.signUp(), a.signUp()]);
    const chatId = await createChat(a, ann.token, [bob.username], 'hello');
    const SUBSCRIPTION = 'subscription PersistedMessages($c: ID) { messageAdded(chatId: $c) { id text } }';

    /** Subscribes through urql with the hash first; the documents each subscribe message carried, and the texts. */
    const subscribe = async (t: TestApp) => {
      const ws = wsClient(t.wsUrl, bob.token);
      const queries: (string | undefined)[] = [];
      const urql = new UrqlClient({
        url: t.url,
        exchanges: [
          persistedExchange({ enableForSubscriptions: true }),
          fetchExchange,
          subscriptionExchange({
            forwardSubscription: (request) => ({
              subscribe: (sink) => {
                queries.push(request.query);
                return { unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) };
              },
            }),
          }),
        ],
      });
      const texts: string[] = [];
      const subscription = urql
        .subscription<{ messageAdded: { text: string } }>(SUBSCRIPTION, { c: chatId })
        .subscribe((r) => r.data && texts.push(r.data.messageAdded.text));
      const deadline = Date.now() + 10_000;
      while (!texts.includes('hello') && Date.now() < deadline) await sleep(20);
      subscription.unsubscribe();
      await ws.dispose();
      return { queries, texts };
    };

    const first = await subscribe(a);
    expect(first.texts).toEqual(['hello']);
    // The hash alone (PersistedQueryNotFound over the socket), then the document, which registers it.
    expect(first.queries.map(Boolean)).toEqual([false, true]);
    expect((await stored(a, prefix)).documents).toBe(1);

    const second = await subscribe(b);
    expect(second.texts).toEqual(['hello']);
    expect(second.queries.map(Boolean)).toEqual([false]);
    await send(a, ann.token, chatId, 'unused'); // the chat still works for everyone
  });
});

describe('refusals', () => {
  it('answers PersistedQueryNotFound for an unknown hash, over POST and GET, and a malformed one', async () => {
    const [a] = await twoApps();
    for (const get of [false, true]) {
      for (const hash of [sha256('{ never }'), 'not-a-hash']) {
        const r = await apq(a, { hash, get });
        expect(r.data).toBeUndefined();
        expect(r.errors).toEqual([
          { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
        ]);
      }
    }
  });

  it('refuses a hash that is not its query’s, and stores nothing', async () => {
    const [a, b, prefix] = await twoApps();
    const query = 'query Mismatch { __typename }';
    const claimed = sha256('query Other { __typename }');
    for (const get of [false, true]) {
      const r = await apq(a, { hash: claimed, query, get });
      expect(r.status).toBe(400);
      expect(r.data).toBeUndefined();
      expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.message).toMatch(
        /^PersistedQueryMismatch: extensions\.persistedQuery\.sha256Hash is not the SHA-256 of the query/,
      );
    }
    expect(await stored(a, prefix)).toEqual({ documents: 0, lastUse: 0 });
    expect((await apq(b, { hash: claimed })).errors?.[0]?.message).toBe('PersistedQueryNotFound');
  });

  it('applies the document limits to a persisted document, and never stores one they refuse', async () => {
    const prefix = uniquePrefix();
    const roomy = await startTestApp({ KEY_PREFIX: prefix });
    const strict = await startTestApp({ KEY_PREFIX: prefix, MAX_QUERY_TOKENS: '30' });
    const big = `query Tokens { ${Array.from({ length: 20 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    // Refused where the limit is low: not stored.
    const refused = await apq(strict, { hash: sha256(big), query: big });
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(refused.errors?.[0]?.message).toMatch(/token/i);
    expect(await stored(roomy, prefix)).toEqual({ documents: 0, lastUse: 0 });
    // Registered where it passes; its hash alone is still held to the low limit.
    expect((await apq(roomy, { hash: sha256(big), query: big })).data).toMatchObject({ a0: 'Query' });
    const byHash = await apq(strict, { hash: sha256(big) });
    expect(byHash.data).toBeUndefined();
    expect(byHash.errors?.[0]?.message).toMatch(/token/i);
  });

  it('counts a registration as an operation: past the rate limit, nothing is stored', async () => {
    const [a, , prefix] = await twoApps({ RATE_LIMIT_PER_MINUTE: '3' });
    const results = [];
    for (let i = 0; i < 5; i++) {
      const query = `query Limited${i} { __typename }`;
      results.push(await apq(a, { hash: sha256(query), query }));
    }
    expect(results.map((r) => r.errors?.[0]?.extensions?.code ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'BUSY', 'BUSY']);
    expect(await stored(a, prefix)).toEqual({ documents: 3, lastUse: 3 });
  });
});

describe('the store’s bounds', () => {
  it('runs a document larger than APQ_MAX_DOCUMENT_BYTES without storing it', async () => {
    const [a, b, prefix] = await twoApps({ APQ_MAX_DOCUMENT_BYTES: '256' });
    const query = `query Large { ${Array.from({ length: 20 }, (_, i) => `alias${i}: __typename`).join(' ')} }`;
    expect(Buffer.byteLength(query)).toBeGreaterThan(256);
    const r = await apq(a, { hash: sha256(query), query });
    expect(r.data).toMatchObject({ alias0: 'Query', alias19: 'Query' });
    expect(await stored(a, prefix)).toEqual({ documents: 0, lastUse: 0 });
    // Its hash alone is unknown everywhere, so the client sends the document again each time.
    expect((await apq(a, { hash: sha256(query) })).errors?.[0]?.message).toBe('PersistedQueryNotFound');
    expect((await apq(b, { hash: sha256(query) })).errors?.[0]?.message).toBe('PersistedQueryNotFound');
  });

  it('keeps APQ_MAX_ENTRIES documents, evicting the least recently used', async () => {
    const [a, b, prefix] = await twoApps({ APQ_MAX_ENTRIES: '3' });
    const docs = [1, 2, 3, 4].map((i) => `query Doc${i} { __typename }`);
    for (const query of docs.slice(0, 3)) {
      expect((await apq(a, { hash: sha256(query), query })).data).toEqual({ __typename: 'Query' });
      await sleep(5);
    }
    // b reads Doc1 from Redis, which marks it used: Doc2 is now the least recently used.
    expect((await apq(b, { hash: sha256(docs[0]!) })).data).toEqual({ __typename: 'Query' });
    await sleep(5);
    expect((await apq(a, { hash: sha256(docs[3]!), query: docs[3] })).data).toEqual({ __typename: 'Query' });
    expect(await stored(a, prefix)).toEqual({ documents: 3, lastUse: 3 });
    // A third process, with nothing in memory, sees what Redis holds.
    const c = await startTestApp({ KEY_PREFIX: prefix, APQ_MAX_ENTRIES: '3' });
    const found = await Promise.all(
      docs.map(async (query) => (await apq(c, { hash: sha256(query) })).data !== undefined),
    );
    expect(found).toEqual([true, false, true, true]);
  });

  it('holds a flood of registrations from two processes at the cap', async () => {
    const [a, b, prefix] = await twoApps({ APQ_MAX_ENTRIES: '50' });
    const total = 1000;
    for (let start = 0; start < total; start += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const query = `query Flood${start + i} { __typename }`;
          return apq((start + i) % 2 ? a : b, { hash: sha256(query), query });
        }),
      );
    }
    expect(await stored(a, prefix)).toEqual({ documents: 50, lastUse: 50 });
    // The newest are those kept.
    const last = `query Flood${total - 1} { __typename }`;
    const c = await startTestApp({ KEY_PREFIX: prefix });
    expect((await apq(c, { hash: sha256(last) })).data).toEqual({ __typename: 'Query' });
    expect((await apq(c, { hash: sha256('query Flood0 { __typename }') })).errors?.[0]?.message).toBe(
      'PersistedQueryNotFound',
    );
    const bytes = await a.redis.memory('USAGE', keysOf(prefix).persistedDocuments());
    console.log(`apq: ${total} documents registered through 2 processes, APQ_MAX_ENTRIES 50: 50 kept, ${bytes} bytes`);
  });
});
