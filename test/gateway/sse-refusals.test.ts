/**
 * A subscription refused over SSE answers with the status of its code (401, 403, 400, 429), its coded error in the
 * stream's `next` event, over POST and GET alike; graphql-sse's client (as README shows it) and urql over it get
 * the coded error as the result and do not ask again: the gateway's request log counts one request per subscription.
 */
import { Client as UrqlClient, fetchExchange, subscriptionExchange } from '@urql/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, requestLog, sseClient, sseRecord, startTestApp, type TestApp } from '../support/app.js';
import { CREATE_CHAT, MESSAGE_ADDED } from '../support/chats.js';

let t: TestApp;
let busy: TestApp;
const logged = requestLog();
let member: string;
let outsider: string;
let chatId: string;

/** The [method, status] of each /graphql request logged since `mark`, once one is. */
async function requestsSince(mark: number) {
  await eventually(() => Promise.resolve(logged.requests(mark).length > 0));
  return logged.requests(mark);
}

beforeAll(async () => {
  t = await startTestApp({}, logged.log);
  busy = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1' });
  member = (await t.signUp()).token;
  outsider = (await t.signUp()).token;
  const created = await t.gql<{ createChat: { id: string } }>(CREATE_CHAT, { m: [], t: 'private' }, member);
  chatId = created.data!.createChat.id;
});

afterAll(async () => {
  await t.close();
  await busy.close();
});

interface Refusal {
  name: string;
  code: string;
  status: number;
  variables: () => Record<string, unknown>;
  authorization: () => string | undefined;
}

const REFUSALS: Refusal[] = [
  { name: 'no token', code: 'UNAUTHENTICATED', status: 401, variables: () => ({}), authorization: () => undefined },
  {
    name: 'a token the gateway never issued',
    code: 'UNAUTHENTICATED',
    status: 401,
    variables: () => ({}),
    authorization: () => `Bearer ${'x'.repeat(43)}`,
  },
  {
    name: 'a chat the user is not a member of',
    code: 'FORBIDDEN',
    status: 403,
    variables: () => ({ c: chatId }),
    authorization: () => `Bearer ${outsider}`,
  },
  {
    name: 'a malformed chat id',
    code: 'BAD_USER_INPUT',
    status: 400,
    variables: () => ({ c: 'not-a-chat' }),
    authorization: () => `Bearer ${member}`,
  },
];

/** A raw SSE request (POST with a JSON body, or GET with the query in the URL); its status and `next` events. */
async function rawSse(
  app: TestApp,
  method: 'POST' | 'GET',
  variables: Record<string, unknown>,
  authorization?: string,
) {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (authorization) headers.authorization = authorization;
  const body = JSON.stringify({ query: MESSAGE_ADDED, variables });
  const res =
    method === 'POST'
      ? await fetch(app.url, { method, headers: { ...headers, 'content-type': 'application/json' }, body })
      : await fetch(
          `${app.url}?${new URLSearchParams({ query: MESSAGE_ADDED, variables: JSON.stringify(variables) })}`,
          {
            headers,
          },
        );
  const text = await res.text(); // a refusal's stream ends by itself
  const events = [...text.matchAll(/^event: next\ndata: (.*)$/gm)].map(
    (m) => JSON.parse(m[1]!) as { errors?: { extensions?: { code?: string; retryAfter?: number } }[] },
  );
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    type: res.headers.get('content-type'),
    events,
    complete: /^event: complete$/m.test(text),
  };
}

describe.each(['POST', 'GET'] as const)('a subscription refused over raw SSE (%s)', (method) => {
  it.each(REFUSALS)('for $name answers $status with $code in the stream', async (refusal) => {
    const r = await rawSse(t, method, refusal.variables(), refusal.authorization());
    expect(r.status).toBe(refusal.status);
    expect(r.type).toMatch(/^text\/event-stream/);
    expect(r.events.map((e) => e.errors?.[0]?.extensions?.code)).toEqual([refusal.code]);
    expect(r.complete).toBe(true);
  });

  it('past the rate limit answers 429 with BUSY in the stream, and Retry-After its retryAfter', async () => {
    // The address spends its one operation of the minute (the quota is taken in batches: until refused).
    for (let i = 0; i < 5; i++) if ((await busy.gql('{ __typename }')).errors?.[0]?.extensions?.code === 'BUSY') break;
    const r = await rawSse(busy, method, {});
    expect(r.status).toBe(429);
    expect(r.events.map((e) => e.errors?.[0]?.extensions?.code)).toEqual(['BUSY']);
    const retryAfter = r.events[0]!.errors![0]!.extensions!.retryAfter!;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(r.retryAfter).toBe(String(retryAfter));
  });
});

describe('an invalid document over SSE', () => {
  it('answers 400 with BAD_USER_INPUT in the stream', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { noSuchField }' }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/^event: next\ndata: .*"code":"BAD_USER_INPUT"/m);
  });
});

describe('a subscription that is admitted over SSE', () => {
  it('still answers 200 and streams', async () => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${member}` },
      body: JSON.stringify({ query: MESSAGE_ADDED, variables: { c: chatId } }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"private"')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
  });
});

describe("graphql-sse's client (distinct connections, as README shows it)", () => {
  it.each(REFUSALS)('for $name gets $code as the result, then completes, in one request', async (refusal) => {
    const from = logged.since();
    const auth = refusal.authorization();
    const client = sseClient(t.url, undefined, { headers: auth ? { authorization: auth } : {} });
    const rec = sseRecord(client, MESSAGE_ADDED, refusal.variables());
    await rec.until(() => rec.completed || rec.error !== undefined);
    client.dispose();
    expect(rec.error).toBeUndefined();
    expect(rec.results.map((r) => r.errors?.[0]?.extensions?.code)).toEqual([refusal.code]);
    expect(await requestsSince(from)).toEqual([['POST', refusal.status]]);
  });
});

describe('urql over graphql-sse', () => {
  it.each(REFUSALS)('for $name gets $code as a GraphQL error of the subscription, in one request', async (refusal) => {
    const from = logged.since();
    const auth = refusal.authorization();
    const sse = sseClient(t.url, undefined, { headers: auth ? { authorization: auth } : {} });
    const urql = new UrqlClient({
      url: t.url,
      exchanges: [
        fetchExchange,
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({ unsubscribe: sse.subscribe({ ...request, query: request.query ?? '' }, sink) }),
          }),
        }),
      ],
    });
    let stop = () => undefined as void;
    const result = await new Promise<{ error?: { graphQLErrors: { extensions?: { code?: unknown } }[] } }>(
      (resolve) => {
        const subscription = urql.subscription(MESSAGE_ADDED, refusal.variables()).subscribe(resolve);
        stop = () => subscription.unsubscribe();
      },
    );
    stop();
    sse.dispose();
    expect(result.error?.graphQLErrors.map((e) => e.extensions?.code)).toEqual([refusal.code]);
    expect(await requestsSince(from)).toEqual([['POST', refusal.status]]);
  });
});
