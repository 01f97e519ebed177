/**
 * Incremental delivery (`@defer`, `@stream`) over HTTP with the clients users use: Apollo Client 4's HttpLink with its
 * incremental handler and urql 6's fetchExchange each get the first part without what was deferred or streamed, then
 * the rest. graphql-armor's document limits and the rate limit still apply to documents that use them, and a client
 * that takes no stream is told what to send.
 */
import { gql } from '@apollo/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, wsRequest, type TestApp } from '../support/app.js';
import { createChat, send } from '../support/chats.js';
import { keysOf } from '../support/keys.js';
import { apolloHttpClient, urqlClient } from '../support/frameworks.js';

let t: TestApp;
let ann: { token: string; username: string };
let chatId: string;
beforeAll(async () => {
  t = await startTestApp();
  ann = await t.signUp();
  const bob = await t.signUp();
  chatId = await createChat(t, bob.token, [ann.username], 'one');
  await send(t, bob.token, chatId, 'two');
  await send(t, bob.token, chatId, 'three');
  for (const id of ['sets-a', 'sets-b', 'sets-c']) {
    const indexed = await t.gql(
      'mutation($id: ID!, $title: String!) { indexDocument(id: $id, title: $title, content: "sorted sets and hashes") { id } }',
      { id, title: id },
      ann.token,
    );
    expect(indexed.errors).toBeUndefined();
  }
});

/** Every result an Apollo watchQuery emits until `done` holds for one (the last). */
async function apolloResults<T>(query: string, variables: Record<string, unknown>, done: (data: T) => boolean) {
  const apollo = apolloHttpClient(t.url, ann.token);
  try {
    return await new Promise<{ data: T | undefined; dataState: string }[]>((resolve, reject) => {
      const seen: { data: T | undefined; dataState: string }[] = [];
      const sub = apollo.watchQuery<T>({ query: gql(query), variables, fetchPolicy: 'no-cache' }).subscribe({
        next: (result) => {
          if (result.error) reject(new Error(result.error.message, { cause: result.error }));
          if (!result.data) return;
          const data = structuredClone(result.data) as T;
          seen.push({ data, dataState: result.dataState });
          if (done(data)) {
            sub.unsubscribe();
            resolve(seen);
          }
        },
        error: reject,
      });
    });
  } finally {
    apollo.stop();
  }
}

/** Every result urql emits for a query until it has no next part. */
function urqlResults<T>(query: string, variables: Record<string, unknown> = {}) {
  const urql = urqlClient(t.url, t.wsClient(ann.token), ann.token);
  return new Promise<{ data: T | undefined; hasNext: boolean }[]>((resolve, reject) => {
    const seen: { data: T | undefined; hasNext: boolean }[] = [];
    // Left subscribed: urql's teardown aborts the fetch, and its reader's cancel() then rejects unhandled.
    urql.query<T>(query, variables, { requestPolicy: 'network-only' }).subscribe((result) => {
      if (result.error) reject(result.error);
      seen.push({ data: structuredClone(result.data), hasNext: result.hasNext });
      if (!result.hasNext) resolve(seen);
    });
  });
}

interface Chats {
  chats: { id: string; unreadCount?: number }[];
}
interface Messages {
  chat: { id: string; messages: { id: number; text: string }[] };
}
interface Search {
  searchDocuments: { totalCount?: number; hits: { document: { id: string } }[] };
}

const CHATS_UNREAD_DEFERRED = 'query ChatsDeferred { chats { id ... @defer { unreadCount } } }';
const ME_DEFERRED = '{ me { id ... @defer { username } } }';
const HISTORY_STREAMED = `query History($c: ID!) {
  chat(id: $c) { id messages(first: 10) @stream(initialCount: 1) { id text } } }`;
const SEARCH_STREAMED = `query Search {
  searchDocuments(query: "sorted sets", sort: ID_ASC) {
    ... @defer { totalCount }
    hits @stream(initialCount: 1) { document { id } } } }`;

describe('Apollo Client 4 (HttpLink and Defer20220824Handler)', () => {
  it('gets the chats without their deferred unreadCount first, then the count', async () => {
    const results = await apolloResults<Chats>(CHATS_UNREAD_DEFERRED, {}, (data) =>
      data.chats.every((chat) => chat.unreadCount !== undefined),
    );
    expect(results[0]).toEqual({ data: { chats: [{ __typename: 'Chat', id: chatId }] }, dataState: 'streaming' });
    expect(results.at(-1)).toEqual({
      data: { chats: [{ __typename: 'Chat', id: chatId, unreadCount: 3 }] },
      dataState: 'complete',
    });
  });

  it("gets a chat's history streamed: the first message, then the others", async () => {
    const results = await apolloResults<Messages>(HISTORY_STREAMED, { c: chatId }, (data) => {
      return data.chat.messages.length === 3;
    });
    const texts = results.map((r) => r.data?.chat.messages.map((m) => m.text));
    // The handler says `streaming` for @defer only: a streamed list is complete, shorter, until its last part.
    expect(texts[0]).toEqual(['one']);
    expect(texts.at(-1)).toEqual(['one', 'two', 'three']);
  });
});

describe('urql 6 (fetchExchange)', () => {
  it('gets the first search hit without the deferred totalCount, then the other hits and the count', async () => {
    const results = await urqlResults<Search>(SEARCH_STREAMED);
    expect(results[0]).toEqual({
      data: { searchDocuments: { hits: [hit('sets-a')] } },
      hasNext: true,
    });
    expect(results.at(-1)).toEqual({
      data: { searchDocuments: { totalCount: 3, hits: ['sets-a', 'sets-b', 'sets-c'].map(hit) } },
      hasNext: false,
    });
  });
});

const hit = (id: string) => ({ document: { id } });

describe('errors in parts', () => {
  it("are masked as the first part's are: an unexpected one is INTERNAL_SERVER_ERROR, its message kept for the log", async () => {
    const [own, other] = await Promise.all([t.signUp(), t.signUp()]);
    const id = await createChat(t, own.token, [other.username], 'hi');
    // A key of the wrong type (what another version might have left): reading the members fails in Redis.
    const names = keysOf(t.config.keyPrefix).chat(id).names;
    await t.redis.del(names);
    await t.redis.set(names, 'not a sorted set');
    const whole = await t.gql('query($c: ID!) { chat(id: $c) { id members { username } } }', { c: id }, own.token);
    const expected = { message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
    expect(whole.errors).toEqual([expect.objectContaining(expected)]);

    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: `Bearer ${own.token}` },
      body: JSON.stringify({
        query: `query($c: ID!) { chat(id: $c) { id ... @defer { members { username } } } }`,
        variables: { c: id },
      }),
    });
    const parts = (await res.text())
      .split(/\r\n---/)
      .filter((part) => part.includes('{'))
      .map(
        (part) =>
          JSON.parse(part.slice(part.indexOf('{'))) as { data?: unknown; incremental?: { errors?: unknown[] }[] },
      );
    expect(parts[0]).toEqual({ data: { chat: { id } }, hasNext: true });
    expect(parts[1]!.incremental![0]!.errors).toEqual([expect.objectContaining(expected)]);
    expect(JSON.stringify(parts)).not.toContain('WRONGTYPE');
  });
});

describe('limits', () => {
  it("graphql-armor's depth, cost and directive limits count what @defer and @stream hold", async () => {
    const limited = await startTestApp({ MAX_QUERY_DEPTH: '3', MAX_QUERY_COST: '40' });
    const { token } = await limited.signUp();
    const deep = await limited.gql('{ chats { ... @defer { messages { sender { username } } } } }', {}, token);
    expect(deep.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(deep.errors?.[0]?.message).toMatch(/depth/i);
    const many = Array.from({ length: 30 }, (_, i) => `f${i}: id`).join(' ');
    const costly = await limited.gql(`{ chats { id ... @defer { ${many} } } }`, {}, token);
    expect(costly.errors?.[0]?.message).toMatch(/cost/i);
    const directives = Array.from({ length: 21 }, () => '@defer').join(' ');
    const repeated = await limited.gql(`{ chats { ... ${directives} { id } } }`, {}, token);
    expect(repeated.errors?.[0]?.message).toMatch(/directives/i);
  });

  it('counts an operation with @defer once against the rate limit, and refuses it past the limit', async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
    const { token } = await limited.signUp();
    const deferred = (accept: string) =>
      fetch(limited.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: ME_DEFERRED }),
      });
    for (let i = 0; i < 2; i++) {
      const res = await deferred('multipart/mixed');
      expect(res.headers.get('content-type')).toMatch(/^multipart\/mixed/);
      expect(await res.text()).toContain('"hasNext":false');
    }
    const refused = await deferred('multipart/mixed, application/json');
    expect(((await refused.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      'BUSY',
    );
  });

  it('answers 406 saying what to send when a client asks for @defer but takes no stream', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${ann.token}` },
      body: JSON.stringify({ query: CHATS_UNREAD_DEFERRED }),
    });
    expect(res.status).toBe(406);
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]!.message).toContain('multipart/mixed');
  });
});

describe('a negative initialCount', () => {
  it('is BAD_USER_INPUT, as a literal and as a variable', async () => {
    const literal = await t.gql(
      'query($c: ID!) { chat(id: $c) { messages @stream(initialCount: -1) { id } } }',
      { c: chatId },
      ann.token,
    );
    const variable = await t.gql(
      'query($c: ID!, $n: Int!) { chat(id: $c) { messages @stream(initialCount: $n) { id } } }',
      { c: chatId, n: -1 },
      ann.token,
    );
    for (const refused of [literal, variable])
      expect(refused.errors?.map((e) => [e.message, e.extensions?.code])).toEqual([
        ['initialCount: must be 0 or more', 'BAD_USER_INPUT'],
      ]);
  });
});

describe('subscriptions', () => {
  it('refuse @defer and @stream, in their own selections and in the fragments they use', async () => {
    const ws = t.wsClient(ann.token);
    for (const query of [
      'subscription { messageAdded { id ... @defer { text } } }',
      'subscription { messageAdded { ...Later } } fragment Later on Message { id ... @defer { text } }',
    ]) {
      const refused = await wsRequest(ws, query);
      expect(refused.errors?.map((e) => [e.message, e.extensions?.code])).toEqual([
        ['@defer is not served in subscriptions', 'BAD_USER_INPUT'],
      ]);
    }
  });
});
