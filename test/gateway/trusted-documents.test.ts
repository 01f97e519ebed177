/**
 * Trusted documents (PERSISTED_ONLY=on): a manifest in graphql-codegen's format (`persisted-documents.json`, hash →
 * document) and the documents an admin registered run by hash, over POST, GET (APQ's extension or `documentId`) and
 * graphql-ws, with Apollo Client's PersistedQueryLink and urql's persistedExchange as the README shows them; an
 * unknown hash and a whole document get their refusals; an admin's whole document with its hash becomes trusted for
 * every process, a non-admin's never; a malformed manifest stops the start; PERSISTED_ONLY=off changes nothing.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client as UrqlClient, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { parse, type DocumentNode } from 'graphql';
import type { Client as WsClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { startTestApp, uniquePrefix, type GraphQLResponse, type TestApp } from '../support/app.js';
import { keysOf } from '../support/keys.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

const ME = 'query TrustedMe { me { username } }';
const TYPENAME = 'query TrustedTypename { __typename }';
/** graphql-codegen's client preset hashes with SHA-1 unless told `hashAlgorithm: 'sha256'`: both are read. */
const SHA1_DOC = 'query TrustedSha1 { __typename }';
const UNLISTED = 'query Unlisted { __typename }';

/** A manifest file as graphql-codegen's client preset writes it; its path. */
function manifestFile(content: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'trusted-')), 'persisted-documents.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const MANIFEST = { [sha256(ME)]: ME, [sha256(TYPENAME)]: TYPENAME, [sha1(SHA1_DOC)]: SHA1_DOC };

type Answer = Omit<GraphQLResponse, 'text'>;

/** One request: a whole query, APQ's hash, or `documentId`, by POST or GET. */
async function ask(
  t: TestApp,
  {
    query,
    hash,
    documentId,
    get = false,
    token,
  }: { query?: string; hash?: string; documentId?: string; get?: boolean; token?: string },
): Promise<Answer> {
  const headers: Record<string, string> = {
    accept: 'application/graphql-response+json',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const body = { query, documentId, extensions: hash === undefined ? undefined : persisted(hash) };
  let response: Response;
  if (get) {
    const url = new URL(t.url);
    for (const [name, value] of Object.entries(body))
      if (value !== undefined) url.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    response = await fetch(url, { headers });
  } else {
    response = await fetch(t.url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }
  return { status: response.status, ...((await response.json()) as object) };
}

/** One operation over graphql-ws with the payload given (a hash-only message carries `query: ''`, as urql sends it). */
function wsAsk(
  client: WsClient,
  payload: { query: string; extensions?: Record<string, unknown>; documentId?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let result: Answer | undefined;
    client.subscribe(payload, {
      next: (value) => (result = { status: 0, ...(value as object) }),
      error: (err) =>
        Array.isArray(err) ? resolve({ status: 0, errors: err as Answer['errors'] }) : reject(new Error(String(err))),
      complete: () => (result ? resolve(result) : reject(new Error('completed without a result'))),
    });
  });
}

/** A document as graphql-codegen's client preset generates it with `persistedDocuments: true`: its hash in `__meta__`. */
type Codegen = DocumentNode & { __meta__: { hash: string } };
const codegen = (document: string): Codegen => Object.assign(parse(document), { __meta__: { hash: sha256(document) } });

const codeOf = (r: Answer) => r.errors?.[0]?.extensions?.code;

/**
 * Two gateway processes on one Redis that run trusted documents only, with the manifest, and a third on the same
 * Redis with PERSISTED_ONLY=off where the tests sign users up (`admin` is an admin: ADMIN_USERS in testConfig).
 */
async function trustedApps(
  env: Record<string, string> = {},
): Promise<{ a: TestApp; b: TestApp; open: TestApp; prefix: string }> {
  const prefix = uniquePrefix();
  const settings = { KEY_PREFIX: prefix, PERSISTED_ONLY: 'on', PERSISTED_DOCUMENTS: manifestFile(MANIFEST), ...env };
  const [a, b, open] = await Promise.all([
    startTestApp(settings),
    startTestApp(settings),
    startTestApp({ KEY_PREFIX: prefix }),
  ]);
  return { a, b, open, prefix };
}

/** The trusted documents an admin registered, in Redis, and the APQ store's documents. */
async function stored(t: TestApp, prefix: string): Promise<{ trusted: number; apq: number }> {
  const k = keysOf(prefix);
  const [trusted, apq] = await Promise.all([t.redis.hlen(k.persistedTrusted()), t.redis.hlen(k.persistedDocuments())]);
  return { trusted, apq };
}

/** fetch, recording whether each request carried the document, and its status. */
function recordingFetch(sent: { withQuery: boolean; status: number }[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.method === 'POST' ? ((await request.clone().json()) as { query?: string }) : {};
    const response = await fetch(request);
    sent.push({
      withQuery: Boolean(new URL(request.url).searchParams.get('query') ?? body.query),
      status: response.status,
    });
    return response;
  };
}

describe('PERSISTED_ONLY=on', () => {
  it('runs a manifest document by its hash over POST and GET, by APQ’s extension and by documentId', async () => {
    const { a, open } = await trustedApps();
    const user = await open.signUp();
    for (const get of [false, true]) {
      const byHash = await ask(a, { hash: sha256(ME), get, token: user.token });
      expect(byHash).toEqual({ status: 200, data: { me: { username: user.username } } });
      for (const documentId of [sha256(TYPENAME), `sha256:${sha256(TYPENAME)}`, sha1(SHA1_DOC)]) {
        expect((await ask(a, { documentId, get })).data).toEqual({ __typename: 'Query' });
      }
    }
  });

  it('refuses an unknown hash and a whole document, over POST and GET, with their codes', async () => {
    const { a, open } = await trustedApps();
    const user = await open.signUp();
    for (const get of [false, true]) {
      for (const request of [{ hash: sha256(UNLISTED) }, { documentId: sha256(UNLISTED) }, { hash: 'not-a-hash' }]) {
        const r = await ask(a, { ...request, get });
        expect(r.status).toBe(404);
        expect(r.data).toBeUndefined();
        expect(r.errors).toEqual([
          { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } },
        ]);
      }
      for (const request of [{ query: UNLISTED }, { query: UNLISTED, hash: sha256(UNLISTED) }, { query: ME }, {}]) {
        for (const token of [undefined, user.token]) {
          const r = await ask(a, { ...request, get, token });
          expect(r.status).toBe(400);
          expect(r.data).toBeUndefined();
          expect(codeOf(r)).toBe('PERSISTED_QUERY_ONLY');
          expect(r.errors?.[0]?.message).toMatch(/^PersistedQueryOnly: this gateway runs only trusted documents/);
        }
      }
    }
  });

  it('runs nothing a non-admin sends whole: a refused mutation writes nothing', async () => {
    const { a, open } = await trustedApps();
    const username = `nobody${Date.now()}`;
    const r = await ask(a, {
      query: `mutation { signUp(username: "${username}", password: "password123") { token } }`,
    });
    expect(codeOf(r)).toBe('PERSISTED_QUERY_ONLY');
    const admin = await open.signUp('admin');
    // An admin may send documents whole.
    const users = await a.gql<{ users: { username: string }[] }>(
      '{ users(prefix: "nobody") { username } }',
      {},
      admin.token,
    );
    expect(users.data).toEqual({ users: [] });
  });

  it('over graphql-ws: a trusted document by hash runs, an unknown hash and a non-admin’s whole document are refused, an admin’s runs', async () => {
    const { a, open } = await trustedApps();
    const [admin, user] = await Promise.all([open.signUp('admin'), open.signUp()]);
    const ws = a.wsClient(user.token);
    expect(await wsAsk(ws, { query: '', extensions: persisted(sha256(ME)) })).toEqual({
      status: 0,
      data: { me: { username: user.username } },
    });
    expect((await wsAsk(ws, { query: '', documentId: `sha256:${sha256(TYPENAME)}` })).data).toEqual({
      __typename: 'Query',
    });
    const unknown = await wsAsk(ws, { query: '', extensions: persisted(sha256(UNLISTED)) });
    expect(unknown.errors).toEqual([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } },
    ]);
    for (const payload of [{ query: UNLISTED }, { query: ME, extensions: persisted(sha256(ME)) }, { query: '' }]) {
      const whole = await wsAsk(ws, payload);
      expect(whole.data).toBeUndefined();
      expect(codeOf(whole)).toBe('PERSISTED_QUERY_ONLY');
    }
    const adminWs = a.wsClient(admin.token);
    expect((await wsAsk(adminWs, { query: UNLISTED })).data).toEqual({ __typename: 'Query' });
  });

  it('Apollo Client’s PersistedQueryLink: an admin’s client registers its document, which then runs by hash for anyone, on every process', async () => {
    const { a, b, open, prefix } = await trustedApps();
    const [admin, user] = await Promise.all([open.signUp('admin'), open.signUp()]);
    const query = gql('query ApolloTrusted { me { username } }');
    const client = (t: TestApp, token: string, sent: { withQuery: boolean; status: number }[]) =>
      new ApolloClient({
        link: new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(
          new HttpLink({ uri: t.url, headers: { authorization: `Bearer ${token}` }, fetch: recordingFetch(sent) }),
        ),
        cache: new InMemoryCache(),
      });

    // A non-admin's client: the hash is unknown, the document sent whole is refused, nothing is stored.
    const refusedSent: { withQuery: boolean; status: number }[] = [];
    const refused = client(a, user.token, refusedSent);
    await expect(refused.query({ query, fetchPolicy: 'network-only' })).rejects.toMatchObject({
      errors: [expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_ONLY' } })],
    });
    expect(refusedSent).toEqual([
      { withQuery: false, status: 404 },
      { withQuery: true, status: 400 },
    ]);
    expect(await stored(a, prefix)).toEqual({ trusted: 0, apq: 0 });

    // The admin's: the hash is unknown, the document sent whole runs and becomes trusted.
    const adminSent: { withQuery: boolean; status: number }[] = [];
    const registering = client(a, admin.token, adminSent);
    expect((await registering.query({ query, fetchPolicy: 'network-only' })).data).toMatchObject({
      me: { username: 'admin' },
    });
    expect(adminSent).toEqual([
      { withQuery: false, status: 404 },
      { withQuery: true, status: 200 },
    ]);
    expect(await stored(a, prefix)).toEqual({ trusted: 1, apq: 0 });

    // The user's client now runs it by hash alone, on the other process too.
    for (const t of [a, b]) {
      const sent: { withQuery: boolean; status: number }[] = [];
      const r = await client(t, user.token, sent).query<{ me: { username: string } }>({
        query,
        fetchPolicy: 'network-only',
      });
      expect(r.data?.me.username).toBe(user.username);
      expect(sent).toEqual([{ withQuery: false, status: 200 }]);
    }
    refused.stop();
    registering.stop();
  });

  it('urql’s persistedExchange with enforcePersistedQueries and graphql-codegen’s hashes: runs by hash, never sends a document', async () => {
    const { a, open } = await trustedApps();
    const user = await open.signUp();
    const sent: { withQuery: boolean; status: number }[] = [];
    const urql = new UrqlClient({
      url: a.url,
      fetch: recordingFetch(sent),
      fetchOptions: { headers: { authorization: `Bearer ${user.token}` } },
      exchanges: [
        persistedExchange({
          enforcePersistedQueries: true,
          preferGetForPersistedQueries: true,
          generateHash: (_query, document) => Promise.resolve((document as unknown as Codegen).__meta__.hash),
        }),
        fetchExchange,
      ],
    });
    const r = await urql.query<{ me: { username: string } }>(codegen(ME), {}).toPromise();
    expect(r.data?.me.username).toBe(user.username);
    const unknown = await urql.query(codegen(UNLISTED), {}).toPromise();
    expect(unknown.error?.graphQLErrors[0]?.extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(sent).toEqual([
      { withQuery: false, status: 200 },
      { withQuery: false, status: 404 },
    ]);
  });

  it('keeps at most APQ_MAX_ENTRIES documents admins registered: past it, an admin’s document runs unregistered', async () => {
    const { a, open, prefix } = await trustedApps({ APQ_MAX_ENTRIES: '1' });
    const admin = await open.signUp('admin');
    const [first, second] = ['query First { __typename }', 'query Second { __typename }'];
    for (const query of [first, second]) {
      const r = await ask(a, { query, hash: sha256(query), token: admin.token });
      expect(r.data).toEqual({ __typename: 'Query' });
    }
    expect(await stored(a, prefix)).toEqual({ trusted: 1, apq: 0 });
    expect((await ask(a, { hash: sha256(first) })).data).toEqual({ __typename: 'Query' });
    expect(codeOf(await ask(a, { hash: sha256(second) }))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });

  it('stores nothing from a non-admin’s document sent whole with its hash', async () => {
    const { a, b, open, prefix } = await trustedApps();
    const user = await open.signUp();
    const r = await ask(a, { query: UNLISTED, hash: sha256(UNLISTED), token: user.token });
    expect(codeOf(r)).toBe('PERSISTED_QUERY_ONLY');
    expect(await stored(a, prefix)).toEqual({ trusted: 0, apq: 0 });
    expect(codeOf(await ask(b, { hash: sha256(UNLISTED) }))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });
});

describe('PERSISTED_ONLY=off (the default)', () => {
  it('runs whole documents and APQ as before, and the manifest’s documents by hash', async () => {
    const prefix = uniquePrefix();
    const t = await startTestApp({ KEY_PREFIX: prefix, PERSISTED_DOCUMENTS: manifestFile(MANIFEST) });
    expect((await ask(t, { query: UNLISTED })).data).toEqual({ __typename: 'Query' });
    expect((await ask(t, { documentId: sha1(SHA1_DOC) })).data).toEqual({ __typename: 'Query' });
    expect((await ask(t, { hash: sha256(TYPENAME), get: true })).data).toEqual({ __typename: 'Query' });
    // An unknown hash is APQ's miss, and anyone registers.
    expect(codeOf(await ask(t, { hash: sha256(UNLISTED) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await ask(t, { query: UNLISTED, hash: sha256(UNLISTED) })).data).toEqual({ __typename: 'Query' });
    expect((await ask(t, { hash: sha256(UNLISTED) })).data).toEqual({ __typename: 'Query' });
    expect(await stored(t, prefix)).toEqual({ trusted: 0, apq: 1 });
  });
});

describe('a malformed manifest', () => {
  it('stops the start with a line naming the file and the problem', async () => {
    const cases: [unknown, RegExp][] = [
      ['{ not json', /persisted-documents\.json: .*JSON/],
      [[ME], /persisted-documents\.json: Invalid input: expected record, received array/],
      [{ [sha256(ME)]: 42 }, /: "[0-9a-f]{64}": .*string/],
      [{ TrustedMe: ME }, /"TrustedMe": a key is the SHA-256 \(64\) or SHA-1 \(40\)/],
      [{ [sha256(UNLISTED)]: ME }, /"[0-9a-f]{64}" is not the SHA-256 of its document/],
      [{ [sha256('query {')]: 'query {' }, /^PERSISTED_DOCUMENTS: the document of "[0-9a-f]{64}": Syntax Error/],
    ];
    for (const [content, message] of cases) {
      const file = manifestFile(content);
      await expect(startTestApp({ PERSISTED_ONLY: 'on', PERSISTED_DOCUMENTS: file })).rejects.toThrow(message);
    }
    await expect(startTestApp({ PERSISTED_DOCUMENTS: '/nonexistent/persisted-documents.json' })).rejects.toThrow(
      /^PERSISTED_DOCUMENTS \/nonexistent\/persisted-documents\.json: ENOENT/,
    );
  });
});
