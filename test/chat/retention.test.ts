import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatCommands } from '../../src/redis/chat/commands.js';
import { keysOf } from '../support/keys.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { CHAT, MARK_READ, createChat, ids, range, send, sendMany } from '../support/chats.js';

// A small history and backlog make trimming and the backlog bound visible.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ CHAT_HISTORY: '5', CHAT_BACKLOG: '20' });
});

type View = { chat: { readUpTo: number; unreadCount: number; lastMessageId: number; messages: { id: number }[] } };
const view = async (token: string, chatId: string, after = 0) =>
  (await t.gql<View>(CHAT, { c: chatId, after, first: 500 }, token)).data!.chat;

describe('retention', () => {
  it('deletes what every member has read, keeping the last CHAT_HISTORY messages', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username]);
    await sendMany(t, ann.token, chatId, 15);
    const stored = () => t.redis.zcard(keysOf(t.config.keyPrefix).chat(chatId).messages);

    await t.gql(MARK_READ, { c: chatId, u: 12 }, ann.token);
    expect(await stored()).toBe(15); // bob has read nothing: everything stays
    await t.gql(MARK_READ, { c: chatId, u: 8 }, bob.token);
    expect(ids((await view(bob.token, chatId)).messages)).toEqual(range(9, 15)); // everyone read 1..8
    await t.gql(MARK_READ, { c: chatId, u: 15 }, bob.token);
    // everyone read up to 12 now, but the last 5 stay: 1..10 are deleted
    expect(ids((await view(ann.token, chatId)).messages)).toEqual(range(11, 15));
    expect(await stored()).toBe(5);
  });

  it('never moves a read position backwards and clamps it to the last id', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username]);
    await sendMany(t, ann.token, chatId, 3);
    const mark = async (u: number) =>
      (await t.gql<{ markRead: { readUpTo: number; unreadCount: number } }>(MARK_READ, { c: chatId, u }, bob.token))
        .data?.markRead;
    expect(await mark(2)).toEqual({ readUpTo: 2, unreadCount: 1 });
    expect(await mark(1)).toEqual({ readUpTo: 2, unreadCount: 1 });
    expect(await mark(99)).toEqual({ readUpTo: 3, unreadCount: 0 });
  });

  it('bounds the backlog: a lagging member loses the oldest unread messages and gets a gap notification naming them', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username]);
    await sendMany(t, ann.token, chatId, 60, 'm', 1);
    await t.gql(MARK_READ, { c: chatId, u: 60 }, ann.token);

    const bobView = await view(bob.token, chatId);
    expect(bobView.unreadCount).toBeLessThanOrEqual(20);
    expect(bobView.unreadCount).toBeGreaterThanOrEqual(18); // dropped down to 90% of the backlog
    expect(ids(bobView.messages)).toEqual(range(bobView.readUpTo + 1, 60)); // what is unread is all there

    const notes = await t.gql<{
      notifications: { kind: string; data: { chatId: string; from: number; to: number } }[];
    }>('{ notifications { kind data } }', {}, bob.token);
    const gaps = notes.data!.notifications.filter((n) => n.kind === 'gap').map((n) => n.data);
    expect(gaps.every((g) => g.chatId === chatId)).toBe(true);
    // The gaps are contiguous, from 1 to the new read position: no silent hole, no overlap.
    const lost = gaps.flatMap((g) => range(g.from, g.to));
    expect(lost).toEqual(range(1, bobView.readUpTo));
    expect(gaps.length).toBeLessThan(30); // one per tenth of the backlog, not one per message
    expect(await t.redis.hlen(keysOf(t.config.keyPrefix).chat(chatId).gaps)).toBe(0); // outbox emptied
  });

  it('gaps dropped while one is being delivered follow it: no overlap, no hole, nothing left in the outbox', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username]);
    await sendMany(t, ann.token, chatId, 20, 'm', 1);
    await t.gql(MARK_READ, { c: chatId, u: 20 }, ann.token); // ann stays within the backlog: bob alone lags

    // 19 concurrent sends past the backlog: the first to drop bob's oldest claims his gap, and its delivery is held
    // (before it clears the outbox) until the other 18 sends are done, each of them dropping more meanwhile.
    const chats = t.app.services.chats as unknown as { commands: ChatCommands };
    const gapDelivered = chats.commands.gapDelivered.bind(chats.commands);
    let othersDone: () => void = () => {};
    const others = new Promise<void>((resolve) => (othersDone = resolve));
    let held = false;
    chats.commands.gapDelivered = async (a) => {
      chats.commands.gapDelivered = gapDelivered;
      held = true;
      await others;
      return gapDelivered(a);
    };
    let done = 0;
    const sends = range(1, 19).map((i) =>
      send(t, ann.token, chatId, `late ${i}`).then((id) => {
        if (++done === 18) othersDone();
        return id;
      }),
    );
    expect((await Promise.all(sends)).sort((a, b) => a - b)).toEqual(range(21, 39));
    expect(held).toBe(true);

    const bobView = await view(bob.token, chatId);
    const unread = await view(bob.token, chatId, bobView.readUpTo);
    expect(ids(unread.messages)).toEqual(range(bobView.readUpTo + 1, 39)); // what is unread is all there
    const notes = await t.gql<{ notifications: { kind: string; data: { from: number; to: number } }[] }>(
      '{ notifications { kind data } }',
      {},
      bob.token,
    );
    const gaps = notes.data!.notifications.filter((n) => n.kind === 'gap').map((n) => n.data);
    expect(gaps.length).toBeGreaterThan(1); // the held gap, then what was dropped while it was held
    // Every id dropped is named once: the ranges, in order, are exactly 1 up to the read position.
    expect(gaps.flatMap((g) => range(g.from, g.to)).sort((a, b) => a - b)).toEqual(range(1, bobView.readUpTo));
    expect(await t.redis.hlen(keysOf(t.config.keyPrefix).chat(chatId).gaps)).toBe(0);
  });
});
