/**
 * graphql-sse's single-connection mode on /graphql (PUT a reservation, GET its stream, POST operations with its
 * token), with graphql-sse's own client in `singleConnection` mode: a chat subscription catches up and then
 * delivers, a refusal is the operation's result, a revoked token ends the subscription, and reservations are bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, requestLog, sseClient, sseRecord, startTestApp, type TestApp } from '../support/app.js';
import { CREATE_CHAT, MESSAGE_ADDED, SEND } from '../support/chats.js';

let t: TestApp;
const logged = requestLog();

beforeAll(async () => {
  t = await startTestApp({ SSE_RESERVATIONS_PER_CLIENT: '2' }, logged.log);
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
