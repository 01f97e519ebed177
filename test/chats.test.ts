import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../src/redis/keys.js';
import { startTestApp, uniqueName, wsClient, type TestApp } from './support/app.js';
import {
  CHAT,
  MARK_READ,
  MESSAGE_ADDED,
  SEND,
  createChat,
  ids,
  range,
  record,
  send,
  sendMany,
  type Delivered,
} from './support/chats.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

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
    const [joe, jeff, jenny] = await Promise.all([t.signUp(uniqueName('joe')), t.signUp(uniqueName('jeff')), t.signUp(uniqueName('jenny'))]);
    const chatId = await createChat(t, joe.token, [jeff.username, jenny.username], 'message 1');

    // jeff subscribes before the sends, jenny after them: both get the same four messages.
    const jeffLive = record(t.wsClient(jeff.token), MESSAGE_ADDED, { c: chatId });
    await jeffLive.until((items) => items.length === 1);
    for (const text of ['message 2', 'message 3', 'message 4']) await send(t, joe.token, chatId, text);
    const jennyLate = record(t.wsClient(jenny.token), MESSAGE_ADDED, {});

    const expected = range(1, 4).map((id) => ({ id, chatId, text: `message ${id}`, sender: { username: joe.username } }));
    expect(await jeffLive.until((items) => items.length >= 4)).toEqual(expected);
    expect(await jennyLate.until((items) => items.length >= 4)).toEqual(expected);

    for (const member of [jeff, jenny]) {
      const view = await t.gql<ChatView>(CHAT, { c: chatId }, member.token);
      expect(view.errors).toBeUndefined();
      expect(view.data?.chat).toMatchObject({ memberCount: 3, lastMessageId: 4, readUpTo: 0, unreadCount: 4 });
      expect(view.data?.chat?.messages.map((m) => m.text)).toEqual(['message 1', 'message 2', 'message 3', 'message 4']);
    }
  });
});

describe('catching up', () => {
  it('a member offline while 100 messages are sent receives all 100 in order, once, when subscribing again', async () => {
    const [joe, jeff] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, joe.token, [jeff.username], 'hello');
    const first = record(t.wsClient(jeff.token), MESSAGE_ADDED, { c: chatId, r: true });
    await first.until((items) => items.length === 1);
    await expect.poll(async () => (await t.gql<ChatView>(CHAT, { c: chatId }, jeff.token)).data?.chat?.readUpTo).toBe(1);
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
