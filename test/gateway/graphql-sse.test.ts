/**
 * graphql-sse's single-connection mode on /graphql (PUT a reservation, GET its stream, POST operations with its
 * token), with graphql-sse's own client in `singleConnection` mode: a chat subscription catches up and then
 * delivers, a refusal is the operation's result, a revoked token ends the subscription, and reservations are bounded,
 * as are the operations one runs (raw requests).
 */
import { createHash } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, requestLog, sseClient, sseRecord, startTestApp, type TestApp } from '../support/app.js';
import { CREATE_CHAT, MESSAGE_ADDED, SEND } from '../support/chats.js';
import { scrape } from '../support/prometheus.js';
import { heapAfterGc } from '../support/heap.js';

let t: TestApp;
const logged = requestLog();

beforeAll(async () => {
  t = await startTestApp({ SSE_RESERVATIONS_PER_CLIENT: '2', WS_MAX_SUBSCRIPTIONS: '3' }, logged.log);
});

afterAll(() => t.close());

async function chatWith(members: string[], text: string) {
  const ann = await t.signUp();
  const created = await t.gql<{ createChat: { id: string } }>(CREATE_CHAT, { m: members, t: text }, ann.token);
  return { ann, chatId: created.data!.createChat.id };
}

const texts = (results: { data?: unknown }[]) =>
  results.map((r) => (r.data as { messageAdded?: { text: string } } | null)?.messageAdded?.text);

describe("graphql-sse's client in single-connection mode", () => {
  it('subscribes over a reserved stream: what the member missed, then new messages', async () => {
    const from = logged.since();
    const bob = await t.signUp();
    const { ann, chatId } = await chatWith([bob.username], 'sent while bob was away');
    const client = sseClient(t.url, bob.token, { singleConnection: true });
    const rec = sseRecord(client, MESSAGE_ADDED, { c: chatId });
    await rec.until(() => rec.results.length === 1);
    await t.gql(SEND, { c: chatId, t: 'and one sent live' }, ann.token);
    await rec.until(() => rec.results.length === 2);
    expect(texts(rec.results)).toEqual(['sent while bob was away', 'and one sent live']);
    rec.stop();
    client.dispose();
    // A reservation and one operation on it (the stream's GET is logged when it ends; the client's DELETE after it
    // finds the stream gone already: 404).
    expect(logged.requests(from)).toEqual(
      expect.arrayContaining([
        ['PUT', 201],
        ['POST', 202],
      ]),
    );
  });

  it('delivers a refusal as the operation result, then completes, without asking again', async () => {
    const outsider = await t.signUp();
    const { chatId } = await chatWith([], 'members only');
    const from = logged.since();
    const client = sseClient(t.url, outsider.token, { singleConnection: true });
    const rec = sseRecord(client, MESSAGE_ADDED, { c: chatId });
    await rec.until(() => rec.completed || rec.error !== undefined);
    expect(rec.error).toBeUndefined();
    expect(rec.results.map((r) => r.errors?.[0]?.extensions?.code)).toEqual(['FORBIDDEN']);
    client.dispose();
    expect(logged.requests(from).filter(([method]) => method === 'PUT' || method === 'POST')).toEqual([
      ['PUT', 201],
      ['POST', 202],
    ]);
  });

  it('ends a subscription with UNAUTHENTICATED when its token is revoked', async () => {
    const bob = await t.signUp();
    const { chatId } = await chatWith([bob.username], 'hello bob');
    const client = sseClient(t.url, bob.token, { singleConnection: true });
    const rec = sseRecord(client, MESSAGE_ADDED, { c: chatId });
    await rec.until(() => rec.results.length === 1);
    await t.gql('mutation { signOut }', {}, bob.token);
    await rec.until(() => rec.completed);
    expect(rec.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    client.dispose();
  });
});

describe('operations over a reserved stream past the rate limit', () => {
  it('get BUSY as their result', async () => {
    const busy = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1' });
    const dave = await busy.signUp(); // the address's one operation of the minute; dave's own quota is next
    for (let i = 0; i < 5; i++) if ((await busy.gql('{ me { id } }', {}, dave.token)).errors?.length) break;
    const client = sseClient(busy.url, dave.token, { singleConnection: true });
    const rec = sseRecord(client, MESSAGE_ADDED, {});
    await rec.until(() => rec.completed || rec.error !== undefined);
    expect(rec.results.map((r) => r.errors?.[0]?.extensions?.code)).toEqual(['BUSY']);
    client.dispose();
    await busy.close();
  });
});

/** A reservation's stream, opened with fetch: the operations' results and completions, by operation id. */
async function openStream(reservation: string, app: TestApp = t) {
  const response = await fetch(app.url, {
    headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': reservation },
  });
  expect(response.status).toBe(200);
  const results = new Map<string, { data?: unknown; errors?: { message: string; extensions?: unknown }[] }[]>();
  const completed = new Set<string>();
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffered = '';
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      buffered += value;
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const lines = buffered.slice(0, end).split('\n');
        buffered = buffered.slice(end + 2);
        const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
        const data = lines.find((line) => line.startsWith('data: '))?.slice(6);
        if (!data) continue;
        const message = JSON.parse(data) as { id: string; payload?: never };
        if (event === 'complete') completed.add(message.id);
        else results.set(message.id, [...(results.get(message.id) ?? []), message.payload!]);
      }
    }
  })();
  return { results: (id: string) => results.get(id) ?? [], completed, close: () => reader.cancel() };
}

describe('operations on one reservation', () => {
  it('are bounded by WS_MAX_SUBSCRIPTIONS: past it BUSY in the stream (its POST 202) until one ends', async () => {
    const bob = await t.signUp();
    const { chatId } = await chatWith([bob.username], 'for the one accepted after');
    const { chatId: closed } = await chatWith([], 'members only');
    const auth = { authorization: `Bearer ${bob.token}` };
    const reserved = await fetch(t.url, { method: 'PUT', headers: auth });
    expect(reserved.status).toBe(201);
    const reservation = await reserved.text();
    const stream = await openStream(reservation);
    const headers = { ...auth, 'content-type': 'application/json', 'x-graphql-event-stream-token': reservation };
    const post = async (operationId: string, query: string, variables: Record<string, unknown> = {}) =>
      (
        await fetch(t.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ query, variables, extensions: { operationId } }),
        })
      ).status;
    const ended = (id: string) => eventually(() => Promise.resolve(stream.completed.has(id)));
    const NOTIFICATIONS = 'subscription { notificationAdded { id } }';

    // Operations answered at once leave no count behind: a query, a refused subscription.
    expect(await post('query', '{ me { id } }')).toBe(202);
    expect(await post('refused', MESSAGE_ADDED, { c: closed })).toBe(202);
    expect(await ended('query')).toBe(true);
    expect(await ended('refused')).toBe(true);
    expect(stream.results('refused')[0]?.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN' });

    const live = async () =>
      (await scrape(t.url.replace(/\/graphql$/, '/metrics'))).value('gateway_subscriptions', { transport: 'sse' });
    const before = await live();
    for (const id of ['1', '2', '3']) expect(await post(id, NOTIFICATIONS)).toBe(202);
    // Counted live while they run on the stream, though each POST has been answered.
    expect(await eventually(async () => (await live()) === (before ?? 0) + 3)).toBe(true);
    expect(await post('4', NOTIFICATIONS)).toBe(202);
    expect(await ended('4')).toBe(true);
    expect(stream.results('4')).toEqual([
      { data: null, errors: [{ message: 'at most 3 operations per connection', extensions: { code: 'BUSY' } }] },
    ]);
    expect(['1', '2', '3'].filter((id) => stream.completed.has(id))).toEqual([]);

    // One stopped (DELETE): the next is accepted, and delivers what bob missed.
    const stop = await fetch(`${t.url}?operationId=1`, { method: 'DELETE', headers });
    expect(stop.status).toBe(200);
    expect(await post('5', MESSAGE_ADDED, { c: chatId })).toBe(202);
    expect(await eventually(() => Promise.resolve(stream.results('5').length === 1))).toBe(true);
    expect(texts(stream.results('5'))).toEqual(['for the one accepted after']);
    await stream.close();
  });
});

/** A reservation of `token`'s user (or anonymous) on `app`, its stream open, and a POST of one operation on it. */
async function reservedOn(app: TestApp, token?: string) {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const reserved = await fetch(app.url, { method: 'PUT', headers: auth });
  expect(reserved.status).toBe(201);
  const reservation = await reserved.text();
  const stream = await openStream(reservation, app);
  const headers = { ...auth, 'content-type': 'application/json', 'x-graphql-event-stream-token': reservation };
  const post = async (operationId: string, body: Record<string, unknown>) =>
    (
      await fetch(app.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...body, extensions: { operationId, ...(body.extensions as object) } }),
      })
    ).status;
  /** The operation's first result, once it completed. */
  const resultOf = async (id: string) => {
    expect(await eventually(() => Promise.resolve(stream.completed.has(id)))).toBe(true);
    return stream.results(id)[0];
  };
  return { headers, post, resultOf, close: () => stream.close() };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('an operation over a reserved stream is held to what yoga checks before parsing', () => {
  it('a hash sent with a query must be its hash: nothing is stored under another document’s', async () => {
    const { token } = await t.signUp();
    const me = 'query Me { me { username } }';
    const hash = sha256(me);
    const on = await reservedOn(t);
    const other = {
      query: 'query Me { __typename }',
      extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
    };
    expect(await on.post('poison', other)).toBe(202);
    expect((await on.resultOf('poison'))?.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    // A client sending the hash alone is not answered with the other document.
    const byHash = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ operationName: 'Me', extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
    });
    const body = (await byHash.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    await on.close();
  });

  it('with PERSISTED_ONLY=on, a whole document runs for an admin only', async () => {
    const only = await startTestApp({ PERSISTED_ONLY: 'on' });
    const on = await reservedOn(only);
    expect(await on.post('whole', { query: '{ __typename }' })).toBe(202);
    expect((await on.resultOf('whole'))?.errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_ONLY' });
    await on.close();
  });

  it('a body past MAX_REQUEST_BYTES is refused with 413, declared or not', async () => {
    const small = await startTestApp({ MAX_REQUEST_BYTES: '4096' });
    const on = await reservedOn(small);
    const large = JSON.stringify({ query: `{ __typename }${' '.repeat(8192)}`, extensions: { operationId: 'large' } });
    const declared = await fetch(small.url, { method: 'POST', headers: on.headers, body: large });
    expect(declared.status).toBe(413);
    // Chunked (no Content-Length): counted as it is read, and refused.
    const chunked = await fetch(small.url, {
      method: 'POST',
      headers: on.headers,
      body: new Blob([large]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBeGreaterThanOrEqual(400);
    expect(await chunked.text()).toContain('Request body too large');
    await on.close();
  });
});

describe('a reserved stream its client stops reading', () => {
  it('holds up its subscriptions, not the gateway’s memory; read again, it gets everything', async () => {
    const TEXT = 8000;
    const MESSAGES = 3000; // 24 MB of messages, if the gateway queued them all for the stream
    const app = await startTestApp({ MAX_MESSAGE_LENGTH: String(TEXT) });
    const [ann, bob] = [await app.signUp(), await app.signUp()];
    const created = await app.gql<{ createChat: { id: string } }>(
      CREATE_CHAT,
      { m: [bob.username], t: 'first' },
      ann.token,
    );
    const chatId = created.data!.createChat.id;
    const auth = { authorization: `Bearer ${bob.token}` };
    const reservation = await (await fetch(app.url, { method: 'PUT', headers: auth })).text();
    // The stream over node:http, paused: nothing of it is read until resumed.
    const stream = await new Promise<IncomingMessage>((resolve) =>
      get(app.url, { headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': reservation } }, resolve),
    );
    stream.pause();
    const posted = await fetch(app.url, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-graphql-event-stream-token': reservation },
      body: JSON.stringify({ query: MESSAGE_ADDED, variables: { c: chatId }, extensions: { operationId: 'feed' } }),
    });
    expect(posted.status).toBe(202);

    const before = heapAfterGc();
    for (let i = 0; i < MESSAGES; i++)
      await app.app.services.chats.sendMessage(ann.username, { chatId, text: `m${i} `.padEnd(TEXT, 'x') });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the last rings arrive
    const held = heapAfterGc() - before; // 2.6-2.8 MB measured, 22 MB when every result was queued
    expect(held).toBeLessThan(6 * 1024 * 1024);

    // Read again: every message arrives, in order, the last one included.
    const seen: number[] = [];
    let buffered = '';
    await new Promise<void>((resolve) => {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const found = /"text":"m(\d+) /.exec(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
          if (found) seen.push(Number(found[1]));
          if (seen.length === MESSAGES) resolve();
        }
      });
      stream.resume();
    });
    expect(seen).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
    stream.destroy();
  });
});

describe('reservations (PUT /graphql)', () => {
  const put = (token?: string) =>
    fetch(t.url, { method: 'PUT', headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('are bounded per user: past SSE_RESERVATIONS_PER_CLIENT, 429 BUSY until one of its streams ends', async () => {
    const carol = await t.signUp();
    const first = await put(carol.token);
    expect(first.status).toBe(201);
    const reservation = await first.text();
    expect((await put(carol.token)).status).toBe(201);
    const refused = await put(carol.token);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      'BUSY',
    );
    // Another user has reservations of their own.
    expect((await put((await t.signUp()).token)).status).toBe(201);
    // Carol opens her first reservation's stream, then closes it: the reservation is hers no more.
    const stream = await fetch(t.url, {
      headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': reservation },
    });
    expect(stream.status).toBe(200);
    await stream.body!.cancel();
    expect(await eventually(async () => (await put(carol.token)).status === 201)).toBe(true);
  });

  it('are dropped when their stream is not opened within SSE_RESERVATION_CONNECT_MS', async () => {
    const soon = await startTestApp({ SSE_RESERVATIONS_PER_CLIENT: '1', SSE_RESERVATION_CONNECT_MS: '100' });
    const erin = await soon.signUp();
    const reserve = () => fetch(soon.url, { method: 'PUT', headers: { authorization: `Bearer ${erin.token}` } });
    const dropped = await reserve();
    expect(dropped.status).toBe(201);
    const token = await dropped.text();
    expect(await eventually(async () => (await reserve()).status === 201)).toBe(true);
    // graphql-sse no longer knows it: a GET with its token is no stream of it (but a request without a query).
    const stale = await fetch(soon.url, {
      headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': token },
    });
    expect(stale.status).toBe(400);
    await soon.close();
  });

  it('refuse a token that is no session with 401 UNAUTHENTICATED', async () => {
    const refused = await put('x'.repeat(43));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      'UNAUTHENTICATED',
    );
  });
});
