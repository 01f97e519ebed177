import { beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import { startTestApp, uniqueName, wsRequest, type TestApp } from '../support/app.js';
import { CHAT, MESSAGE_ADDED, SEND, createChat, record } from '../support/chats.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ MAX_MESSAGE_LENGTH: '100000', WS_MAX_SUBSCRIPTIONS: '3' });
});

const code = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

describe('authorization', () => {
  it('gives non-members FORBIDDEN everywhere, over HTTP and WebSocket, and writes nothing', async () => {
    const [ann, bob, eve] = await Promise.all([t.signUp(), t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'secret');
    const before = await t.redis.dump(keysOf(t.config.keyPrefix).chat(chatId).members);
    const attempts: [string, Record<string, unknown>][] = [
      [CHAT, { c: chatId }],
      [SEND, { c: chatId, t: 'hi' }],
      ['mutation($c: ID!) { markRead(chatId: $c, upTo: 1) { id } }', { c: chatId }],
      [
        'mutation($c: ID!, $u: String!) { addChatMember(chatId: $c, username: $u) { id } }',
        { c: chatId, u: eve.username },
      ],
      ['mutation($c: ID!, $u: String!) { removeChatMember(chatId: $c, username: $u) }', { c: chatId, u: bob.username }],
      ['mutation($c: ID!) { leaveChat(chatId: $c) }', { c: chatId }],
      ['mutation($c: ID!) { joinChat(chatId: $c) { id } }', { c: chatId }],
    ];
    for (const [query, variables] of attempts) {
      const r = await t.gql(query, variables, eve.token);
      expect(code(r), query).toBe('FORBIDDEN');
    }
    const client = t.wsClient(eve.token);
    for (const [query, variables] of attempts)
      expect(code(await wsRequest(client, query, variables)), query).toBe('FORBIDDEN');
    const live = record(client, MESSAGE_ADDED, { c: chatId });
    await live.until(() => live.completed);
    expect(live.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN' } }]);

    expect(await t.redis.dump(keysOf(t.config.keyPrefix).chat(chatId).members)).toEqual(before);
    expect(
      (await t.gql<{ chat: { lastMessageId: number } }>(CHAT, { c: chatId }, ann.token)).data?.chat.lastMessageId,
    ).toBe(1);
    expect(await t.redis.zcard(keysOf(t.config.keyPrefix).user(eve.username).chats)).toBe(0);
  });

  it('closes a socket with 4403 once its session is revoked elsewhere, ending its live subscriptions', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'hi');
    const live = record(t.wsClient(ann.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    expect((await t.gql('mutation { signOut }', {}, ann.token)).data).toEqual({ signOut: true });
    await live.until(() => live.closed !== null);
    expect(live.closed).toEqual({ code: 4403 });
  });

  it('refuses removeChatMember of oneself (leaveChat is for that) with BAD_USER_INPUT', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, []);
    const r = await t.gql(
      'mutation($c: ID!, $u: String!) { removeChatMember(chatId: $c, username: $u) }',
      { c: chatId, u: ann.username },
      ann.token,
    );
    expect(code(r)).toBe('BAD_USER_INPUT');
    expect(
      (await t.gql<{ chat: { memberCount: number } }>(CHAT, { c: chatId }, ann.token)).data?.chat.memberCount,
    ).toBe(1);
  });

  it('asks anonymous callers to sign in, over HTTP and WebSocket', async () => {
    expect(code(await t.gql('{ chats { id } }'))).toBe('UNAUTHENTICATED');
    const live = record(t.wsClient(), 'subscription { notificationAdded { id } }', {}, 'notificationAdded');
    await live.until(() => live.completed);
    expect(live.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
  });
});

describe('bad input', () => {
  it.each([
    ['an empty message', SEND, { t: '' }, 'BAD_USER_INPUT', /^text:/],
    ['a message of spaces', SEND, { t: '   ' }, 'BAD_USER_INPUT', /^text:/],
    ['an oversized message', SEND, { t: 'x'.repeat(100_001) }, 'BAD_USER_INPUT', /^text:/],
    ['a malformed chat id', SEND, { c: 'abc', t: 'hi' }, 'BAD_USER_INPUT', /^chatId:/],
    ['a chat id with a brace', SEND, { c: '1}', t: 'hi' }, 'BAD_USER_INPUT', /^chatId:/],
    ['an unknown chat', SEND, { c: '999999999', t: 'hi' }, 'NOT_FOUND', /chat/],
    ['a negative upTo', 'mutation($c: ID!) { markRead(chatId: $c, upTo: -1) { id } }', {}, 'BAD_USER_INPUT', /^upTo:/],
    [
      'a negative after',
      'query($c: ID!) { chat(id: $c) { messages(after: -1) { id } } }',
      {},
      'BAD_USER_INPUT',
      /^after:/,
    ],
    [
      'too many messages asked',
      'query($c: ID!) { chat(id: $c) { messages(first: 501) { id } } }',
      {},
      'BAD_USER_INPUT',
      /^first:/,
    ],
  ])('refuses %s with %s and writes nothing', async (_why, query, variables, expected, message) => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'first');
    const r = await t.gql(query, { c: chatId, ...variables }, ann.token);
    expect(code(r)).toBe(expected);
    expect(r.errors?.[0]?.message).toMatch(message);
    const state = await t.gql<{ chat: { lastMessageId: number; readUpTo: number } }>(CHAT, { c: chatId }, ann.token);
    expect(state.data?.chat).toMatchObject({ lastMessageId: 1, readUpTo: 0 });
  });

  it('counts MAX_MESSAGE_LENGTH in characters (code points), not UTF-16 units', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, []);
    const emoji = '\u{1F600}'; // one character, two UTF-16 units
    const atLimit = await t.gql<{ sendMessage: { text: string } }>(
      SEND,
      { c: chatId, t: emoji.repeat(100_000) },
      ann.token,
    );
    expect(atLimit.errors).toBeUndefined();
    expect([...atLimit.data!.sendMessage.text]).toHaveLength(100_000);
    const over = await t.gql(SEND, { c: chatId, t: emoji.repeat(100_000) + 'x' }, ann.token);
    expect(code(over)).toBe('BAD_USER_INPUT');
  });

  it('answers a message with a lone surrogate with the text as stored and delivered (U+FFFD in its place)', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, []);
    const sent = await t.gql<{ sendMessage: { id: number; text: string } }>(
      SEND,
      { c: chatId, t: 'a\ud800b' },
      ann.token,
    );
    expect(sent.data?.sendMessage.text).toBe('a\ufffdb');
    const stored = await t.gql<{ chat: { messages: { text: string }[] } }>(CHAT, { c: chatId }, ann.token);
    expect(stored.data?.chat.messages.map((m) => m.text)).toEqual(['a\ufffdb']);
    const live = record(t.wsClient(ann.token), MESSAGE_ADDED, { c: chatId });
    expect((await live.until((items) => items.length === 1))[0]?.text).toBe('a\ufffdb');
    live.stop();
  });

  it('refuses createChat with an unknown or malformed member before writing anything', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const keys = keysOf(t.config.keyPrefix);
    const lastId = await t.redis.get(keys.chatIds());
    const unknown = await t.gql(
      'mutation($m: [String!]!) { createChat(members: $m) { id } }',
      { m: [bob.username, uniqueName('ghost')] },
      ann.token,
    );
    expect(code(unknown)).toBe('NOT_FOUND');
    const malformed = await t.gql(
      'mutation($m: [String!]!) { createChat(members: $m) { id } }',
      { m: [bob.username, 'no spaces'] },
      ann.token,
    );
    expect(code(malformed)).toBe('BAD_USER_INPUT');
    expect(malformed.errors?.[0]?.message).toMatch(/^members:/);
    expect(await t.redis.get(keys.chatIds())).toBe(lastId);
    for (const u of [ann, bob]) expect(await t.redis.zcard(keys.user(u.username).chats)).toBe(0);
    expect(code(await t.gql('mutation { createChat(members: [], message: "") { id } }', {}, ann.token))).toBe(
      'BAD_USER_INPUT',
    );
  });
});

describe('socket limits', () => {
  it('refuses operations past WS_MAX_SUBSCRIPTIONS on one connection with BUSY', async () => {
    const ann = await t.signUp();
    const client = t.wsClient(ann.token);
    const live = [1, 2, 3].map(() =>
      record(client, 'subscription { notificationAdded { id } }', {}, 'notificationAdded'),
    );
    const fourth = record(client, 'subscription { notificationAdded { id } }', {}, 'notificationAdded');
    await fourth.until(() => fourth.completed);
    expect(fourth.errors).toMatchObject([{ extensions: { code: 'BUSY' } }]);
    live[0]!.stop();
    const fifth = record(client, MESSAGE_ADDED, {});
    const chatId = await createChat(t, ann.token, [], 'after one stopped');
    await fifth.until((items) => items.some((m) => m.chatId === chatId));
  });
});

describe('delivery paths', () => {
  it('delivers messages too large to ride on the doorbell by reading them, in order with the small ones', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'small 1');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    const big = 'b'.repeat(50_000);
    for (const text of ['small 2', big, 'small 3']) await t.gql(SEND, { c: chatId, t: text }, ann.token);
    await live.until((items) => items.length === 4);
    expect(live.items.map((m) => [m.id, m.text.length])).toEqual([
      [1, 7],
      [2, 7],
      [3, 50_000],
      [4, 7],
    ]);
  });
});

describe('SSE', () => {
  it('serves messageAdded over graphql-yoga SSE too', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'over sse');
    const res = await fetch(t.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${ann.token}`,
      },
      body: JSON.stringify({
        query: 'subscription($c: ID) { messageAdded(chatId: $c) { id text } }',
        variables: { c: chatId },
      }),
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('over sse')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain('"messageAdded":{"id":1,"text":"over sse"}');
  });
});
