import { beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import { startTestApp, uniqueName, wsClient, type TestApp } from '../support/app.js';
import { CHAT, MESSAGE_ADDED, createChat, ids, range, record, send, sendMany } from '../support/chats.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});

type ChatView = {
  chat: {
    id: string;
    memberCount: number;
    lastMessageId: number;
    readUpTo: number;
    unreadCount: number;
    messages: { id: number; text: string; sender: { username: string } }[];
  } | null;
};

describe("the book's group chat", () => {
  it('joe creates a chat with jeff and jenny with "message 1", sends 2, 3, 4; both receive the four in order', async () => {
    const [joe, jeff, jenny] = await Promise.all([
      t.signUp(uniqueName('joe')),
      t.signUp(uniqueName('jeff')),
      t.signUp(uniqueName('jenny')),
    ]);
    const chatId = await createChat(t, joe.token, [jeff.username, jenny.username], 'message 1');

    // jeff subscribes before the sends, jenny after them: both get the same four messages.
    const jeffLive = record(t.wsClient(jeff.token), MESSAGE_ADDED, { c: chatId });
    await jeffLive.until((items) => items.length === 1);
    for (const text of ['message 2', 'message 3', 'message 4']) await send(t, joe.token, chatId, text);
    const jennyLate = record(t.wsClient(jenny.token), MESSAGE_ADDED, {});

    const expected = range(1, 4).map((id) => ({
      id,
      chatId,
      text: `message ${id}`,
      sender: { username: joe.username },
    }));
    expect(await jeffLive.until((items) => items.length >= 4)).toEqual(expected);
    expect(await jennyLate.until((items) => items.length >= 4)).toEqual(expected);

    for (const member of [jeff, jenny]) {
      const view = await t.gql<ChatView>(CHAT, { c: chatId }, member.token);
      expect(view.errors).toBeUndefined();
      expect(view.data?.chat).toMatchObject({ memberCount: 3, lastMessageId: 4, readUpTo: 0, unreadCount: 4 });
      expect(view.data?.chat?.messages.map((m) => m.text)).toEqual([
        'message 1',
        'message 2',
        'message 3',
        'message 4',
      ]);
    }
  });
});

describe('catching up', () => {
  it('a member offline while 100 messages are sent receives all 100 in order, once, when subscribing again', async () => {
    const [joe, jeff] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, joe.token, [jeff.username], 'hello');
    const first = record(t.wsClient(jeff.token), MESSAGE_ADDED, { c: chatId, r: true });
    await first.until((items) => items.length === 1);
    await expect
      .poll(async () => (await t.gql<ChatView>(CHAT, { c: chatId }, jeff.token)).data?.chat?.readUpTo)
      .toBe(1);
    first.stop();

    await sendMany(t, joe.token, chatId, 100);
    const again = record(t.wsClient(jeff.token), MESSAGE_ADDED, { c: chatId, r: true });
    await again.until((items) => items.length >= 100);
    const sentinel = await send(t, joe.token, chatId, 'sentinel');
    const items = await again.until((all) => all.some((m) => m.id === sentinel));
    expect(ids(items)).toEqual(range(2, 102));
  });

  it('a socket killed mid-delivery of 1000 unread messages, then a new subscription: the union has all 1000', async () => {
    const [joe, jeff] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, joe.token, [jeff.username]);
    await sendMany(t, joe.token, chatId, 1000, 'm', 50);

    const client = wsClient(t.wsUrl, jeff.token);
    const first = record(client, MESSAGE_ADDED, { c: chatId, r: true });
    await first.until((items) => items.length >= 250);
    client.terminate(); // drops the socket at once, as a lost connection would
    const seenFirst = ids(first.items);
    expect(seenFirst).toEqual(range(1, seenFirst.length)); // in order, nothing skipped

    const second = record(t.wsClient(jeff.token), MESSAGE_ADDED, { c: chatId, r: true });
    const items = await second.until((all) => all.at(-1)?.id === 1000, 20_000);
    const secondIds = ids(items);
    expect(secondIds).toEqual(range(secondIds[0]!, 1000)); // in order, from the first one not marked read
    expect(secondIds[0]).toBeLessThanOrEqual(seenFirst.length + 1);
    expect(new Set([...seenFirst, ...secondIds]).size).toBe(1000);
  });
});

describe('several devices', () => {
  it('a second device receives new messages that the first one marked read', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'one');
    const phone = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId, r: true });
    const desktop = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    // Generous deadlines: twice, under the whole suite's parallel load, one stream here got nothing in 10 s.
    await Promise.all([
      phone.until((items) => items.length === 1, 25_000),
      desktop.until((items) => items.length === 1, 25_000),
    ]);
    await sendMany(t, ann.token, chatId, 20);
    await Promise.all([
      phone.until((items) => items.length === 21, 25_000),
      desktop.until((items) => items.length === 21, 25_000),
    ]);
    expect(ids(desktop.items)).toEqual(range(1, 21));
    expect(ids(phone.items)).toEqual(range(1, 21));
    await expect
      .poll(async () => (await t.gql<ChatView>(CHAT, { c: chatId }, bob.token)).data?.chat?.readUpTo)
      .toBe(21);
  }, 60_000);
});

describe('joining, leaving and the all-chats subscription', () => {
  it('joins a public chat at its last id (also with no message yet); a private chat refuses with FORBIDDEN', async () => {
    const [ann, bob, cat] = await Promise.all([t.signUp(), t.signUp(), t.signUp()]);
    const empty = await createChat(t, ann.token, [], undefined, true);
    const join = 'mutation($c: ID!) { joinChat(chatId: $c) { readUpTo lastMessageId memberCount } }';
    expect((await t.gql(join, { c: empty }, bob.token)).data).toEqual({
      joinChat: { readUpTo: 0, lastMessageId: 0, memberCount: 2 },
    });

    const busy = await createChat(t, ann.token, [], 'one', true);
    await sendMany(t, ann.token, busy, 4);
    expect((await t.gql(join, { c: busy }, bob.token)).data).toEqual({
      joinChat: { readUpTo: 5, lastMessageId: 5, memberCount: 2 },
    });
    // joining twice changes nothing
    expect((await t.gql(join, { c: busy }, bob.token)).data).toEqual({
      joinChat: { readUpTo: 5, lastMessageId: 5, memberCount: 2 },
    });

    const closed = await createChat(t, ann.token, [bob.username], 'private');
    const refused = await t.gql(join, { c: closed }, cat.token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql<ChatView>(CHAT, { c: closed }, ann.token)).data?.chat?.memberCount).toBe(2);
    expect(await t.redis.zcard(keysOf(t.config.keyPrefix).user(cat.username).chats)).toBe(0);
  });

  it('the all-chats subscription follows joins and leaves; leave and rejoin starts at the last id', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const a = await createChat(t, ann.token, [bob.username], 'a1');
    const b = await createChat(t, ann.token, [], 'b1', true);
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, {});
    await live.until((items) => items.some((m) => m.text === 'a1'));

    await t.gql('mutation($c: ID!) { joinChat(chatId: $c) { id } }', { c: b }, bob.token);
    await send(t, ann.token, b, 'b2');
    await live.until((items) => items.some((m) => m.text === 'b2'));
    expect(live.items.map((m) => m.text)).toEqual(['a1', 'b2']); // b1 was sent before bob joined

    expect((await t.gql('mutation($c: ID!) { leaveChat(chatId: $c) }', { c: b }, bob.token)).data).toEqual({
      leaveChat: true,
    });
    await send(t, ann.token, b, 'b3 (bob is away)');
    await send(t, ann.token, a, 'a2');
    await live.until((items) => items.some((m) => m.text === 'a2'));
    expect(live.items.map((m) => m.text)).toEqual(['a1', 'b2', 'a2']);

    const rejoin = await t.gql<{ joinChat: { readUpTo: number } }>(
      'mutation($c: ID!) { joinChat(chatId: $c) { readUpTo } }',
      { c: b },
      bob.token,
    );
    expect(rejoin.data?.joinChat.readUpTo).toBe(3);
    await send(t, ann.token, b, 'b4');
    await live.until((items) => items.some((m) => m.text === 'b4'));
    expect(live.items.map((m) => m.text)).toEqual(['a1', 'b2', 'a2', 'b4']);

    const chats = await t.gql<{ chats: { id: string }[] }>('{ chats { id } }', {}, bob.token);
    expect(chats.data?.chats.map((c) => c.id)).toEqual([b, a]); // most recent activity first
  });

  it('a member removed by the creator stops receiving: the one-chat subscription ends with FORBIDDEN', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hi');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    const byBob = await t.gql(
      'mutation($c: ID!, $u: String!) { removeChatMember(chatId: $c, username: $u) }',
      { c: chatId, u: ann.username },
      bob.token,
    );
    expect(byBob.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const removed = await t.gql(
      'mutation($c: ID!, $u: String!) { removeChatMember(chatId: $c, username: $u) }',
      { c: chatId, u: bob.username },
      ann.token,
    );
    expect(removed.data).toEqual({ removeChatMember: true });
    await live.until(() => live.completed);
    expect(live.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN' } }]);
    await send(t, ann.token, chatId, 'after removal');
    expect(live.items.map((m) => m.text)).toEqual(['hi']);
    const notes = await t.gql<{ notifications: { kind: string; data: { chatId: string } }[] }>(
      '{ notifications { kind data } }',
      {},
      bob.token,
    );
    expect(notes.data?.notifications.map((n) => [n.kind, n.data.chatId])).toEqual([
      ['added', chatId],
      ['removed', chatId],
    ]);
  });

  it('the last member leaving deletes the chat, its messages and counters', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'one');
    await sendMany(t, bob.token, chatId, 3);
    const leave = 'mutation($c: ID!) { leaveChat(chatId: $c) }';
    await t.gql(leave, { c: chatId }, ann.token);
    const k = keysOf(t.config.keyPrefix).chat(chatId);
    expect(await t.redis.exists(k.meta)).toBe(1);
    await t.gql(leave, { c: chatId }, bob.token);
    for (const key of [k.meta, k.seq, k.version, k.members, k.names, k.messages, k.gaps])
      expect(await t.redis.exists(key)).toBe(0);
    expect((await t.gql(CHAT, { c: chatId }, bob.token)).data).toEqual({ chat: null });
    expect((await t.gql(leave, { c: chatId }, bob.token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('members, contacts and notifications', () => {
  it('members(prefix) autocompletes case-insensitively over the chat name index', async () => {
    const stem = uniqueName('m');
    const [owner, x, y, z] = await Promise.all([
      t.signUp(`${stem}owner`),
      t.signUp(`${stem}xa`),
      t.signUp(`${stem}xb`),
      t.signUp(`${stem}yc`),
    ]);
    const chatId = await createChat(t, owner.token, [y.username, x.username, z.username]);
    const q = 'query($c: ID!, $p: String, $f: Int) { chat(id: $c) { members(prefix: $p, first: $f) { username } } }';
    const names = async (p?: string, f?: number) =>
      (
        await t.gql<{ chat: { members: { username: string }[] } }>(q, { c: chatId, p, f }, owner.token)
      ).data?.chat.members.map((m) => m.username);
    expect(await names()).toEqual([owner.username, x.username, y.username, z.username]);
    expect(await names(`${stem}X`.toUpperCase())).toEqual([x.username, y.username]);
    expect(await names(`${stem}x`, 1)).toEqual([x.username]);
    expect(await names('{')).toEqual([]);
    const bad = await t.gql(q, { c: chatId, f: 1001 }, owner.token);
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('contacts: newest first, moved to the front by createChat, addChatMember and sendMessage, capped at 100', async () => {
    const me = await t.signUp();
    const keys = keysOf(t.config.keyPrefix);
    const others = Array.from({ length: 105 }, (_, i) => `${uniqueName('c')}${String(i).padStart(3, '0')}`);
    await Promise.all(others.map((name) => t.app.services.users.createSystemUser({ username: name })));
    const contacts = async (prefix?: string, first?: number) =>
      (
        await t.gql<{ contacts: string[] }>(
          'query($p: String, $f: Int) { contacts(prefix: $p, first: $f) }',
          { p: prefix, f: first },
          me.token,
        )
      ).data?.contacts;

    const chatId = await createChat(t, me.token, others.slice(0, 3));
    expect(await contacts()).toEqual(others.slice(0, 3));
    await t.gql(
      'mutation($c: ID!, $u: String!) { addChatMember(chatId: $c, username: $u) { id } }',
      { c: chatId, u: others[3] },
      me.token,
    );
    expect(await contacts()).toEqual([others[3], ...others.slice(0, 3)]);
    expect(await contacts(others[1]!.toUpperCase())).toEqual([others[1]]);
    expect(await contacts(undefined, 2)).toEqual([others[3], others[0]]);

    await createChat(t, me.token, others.slice(4)); // 101 more names: only the newest 100 stay
    const all = await contacts(undefined, 100);
    expect(all).toHaveLength(100);
    expect(all).toEqual(others.slice(4, 104));
    expect(await t.redis.llen(keys.user(me.username).contacts)).toBe(100);

    await send(t, me.token, chatId, 'hi'); // the chat's members come to the front again
    expect((await contacts(undefined, 4))?.sort()).toEqual(others.slice(0, 4).sort());
    expect(
      (await t.gql('mutation($u: String!) { removeContact(username: $u) }', { u: others[0] }, me.token)).data,
    ).toEqual({ removeContact: true });
    expect(await contacts(others[0])).toEqual([]);
    expect(
      (await t.gql('mutation($u: String!) { removeContact(username: $u) }', { u: others[0] }, me.token)).data,
    ).toEqual({ removeContact: false });
  });

  it('notifications arrive in order, live and on catch-up, and are acknowledged up to an id', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const c1 = await createChat(t, ann.token, [bob.username]);
    const live = record<{ id: number; kind: string }>(
      t.wsClient(bob.token),
      'subscription { notificationAdded { id kind text createdAt data } }',
      {},
      'notificationAdded',
    );
    await live.until((items) => items.length === 1);
    const c2 = await createChat(t, ann.token, [bob.username]);
    await live.until((items) => items.length === 2);
    expect(live.items.map((n) => [n.id, n.kind])).toEqual([
      [1, 'added'],
      [2, 'added'],
    ]);

    const ack = 'mutation($u: Int!) { ackNotifications(upTo: $u) }';
    expect((await t.gql(ack, { u: 1 }, bob.token)).data).toEqual({ ackNotifications: 1 });
    const list = await t.gql<{ notifications: { id: number; data: { chatId: string } }[] }>(
      '{ notifications { id data } }',
      {},
      bob.token,
    );
    expect(list.data?.notifications.map((n) => [n.id, n.data.chatId])).toEqual([[2, c2]]);
    const again = record<{ id: number }>(
      t.wsClient(bob.token),
      'subscription { notificationAdded { id } }',
      {},
      'notificationAdded',
    );
    await again.until((items) => items.length === 1);
    expect(again.items).toEqual([{ id: 2 }]);
    expect((await t.gql(ack, { u: 2 }, bob.token)).data).toEqual({ ackNotifications: 0 });
    expect((await t.gql(ack, { u: -1 }, bob.token)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(c1).not.toBe(c2);
  });
});
