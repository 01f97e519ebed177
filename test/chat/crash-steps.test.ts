/**
 * Operations that span a chat's slot and a user's slot run as ordered single-slot steps. These tests stop an
 * operation between its steps (by running only the first step's script, as a process killed there would) and
 * show that the result repeats work and never loses it; and a leave and an add whose steps interleave.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { chatCommands, type ChatCommands } from '../../src/redis/chat/commands.js';
import { keyspace } from '../../src/redis/keys.js';
import { keysOf } from '../support/keys.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { CHAT, MESSAGE_ADDED, createChat, record, send, sendMany } from '../support/chats.js';

let t: TestApp;
let keys: ReturnType<typeof keysOf>;
let commands: ChatCommands;
beforeAll(async () => {
  t = await startTestApp({ CHAT_HISTORY: '5', CHAT_BACKLOG: '20' });
  keys = keysOf(t.config.keyPrefix);
  commands = chatCommands(t.redis, keyspace(t.config.keyPrefix), t.app.services.replicated);
});

describe('a crash between the steps of', () => {
  it('a join (index written, chat not yet): the chat stays invisible and forbidden, and the join can be done again', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [], 'before', true);
    await commands.indexChat({ user: bob.username, chatId, maxChats: 1000 }); // step 1 only

    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, {});
    expect((await t.gql<{ chats: unknown[] }>('{ chats { id } }', {}, bob.token)).data?.chats).toEqual([]);
    expect((await t.gql(CHAT, { c: chatId }, bob.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Joining again completes it; the all-chats subscription that was already watching wakes up.
    await t.gql('mutation($c: ID!) { joinChat(chatId: $c) { id } }', { c: chatId }, bob.token);
    await send(t, ann.token, chatId, 'after join');
    await live.until((items) => items.length === 1);
    expect(live.items.map((m) => m.text)).toEqual(['after join']);
  });

  it('a leave (chat written, index not yet): the chat is gone from chats and from subscriptions', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hi');
    await commands.leaveChat({ chatId, member: bob.username, history: 5, by: '' }); // step 1 only
    expect(await t.redis.zscore(keys.user(bob.username).chats, chatId)).not.toBeNull(); // the stale index entry

    expect((await t.gql<{ chats: unknown[] }>('{ chats { id } }', {}, bob.token)).data?.chats).toEqual([]);
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, {});
    const other = await createChat(t, ann.token, [bob.username], 'other chat');
    await send(t, ann.token, chatId, 'not for bob');
    await live.until((items) => items.length === 1);
    expect(live.items.map((m) => m.chatId)).toEqual([other]);

    // Leaving again is refused (not a member) but clears the stale entry.
    const again = await t.gql('mutation($c: ID!) { leaveChat(chatId: $c) }', { c: chatId }, bob.token);
    expect(again.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await t.redis.zscore(keys.user(bob.username).chats, chatId)).toBeNull();
  });

  it('a leave whose index step runs after a concurrent add re-made the user a member: the entry stays', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hi');
    await commands.leaveChat({ chatId, member: bob.username, history: 5, by: '' }); // bob's leave, step 1
    await t.gql(
      'mutation($c: ID!, $u: String!) { addChatMember(chatId: $c, username: $u) { id } }',
      { c: chatId, u: bob.username },
      ann.token,
    );
    // bob's leave, step 2 (the index), running late:
    await (t.app.services.chats as unknown as { unindex(a: { user: string; chatId: string }): Promise<void> }).unindex({
      user: bob.username,
      chatId,
    });
    const chats = await t.gql<{ chats: { id: string }[] }>('{ chats { id } }', {}, bob.token);
    expect(chats.data?.chats.map((x) => x.id)).toEqual([chatId]);
  });

  it('a leave whose index step runs between the two steps of a concurrent add: the add puts the entry back', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hi');
    await commands.leaveChat({ chatId, member: bob.username, history: 5, by: '' }); // bob's leave, step 1
    // ann adds bob back: her index step finds the leave's entry still there; bob's leave, step 2, runs just after
    // it (removing the entry: bob is no member yet), then her chat step.
    const chats = t.app.services.chats as unknown as {
      commands: ChatCommands;
      unindex(a: { user: string; chatId: string }): Promise<void>;
    };
    const joinChat = chats.commands.joinChat.bind(chats.commands);
    let interleaved = false;
    chats.commands.joinChat = async (a) => {
      chats.commands.joinChat = joinChat;
      await chats.unindex({ user: bob.username, chatId });
      interleaved = true;
      return joinChat(a);
    };
    const added = await t.gql(
      'mutation($c: ID!, $u: String!) { addChatMember(chatId: $c, username: $u) { id } }',
      { c: chatId, u: bob.username },
      ann.token,
    );
    expect(added.errors).toBeUndefined();
    expect(interleaved).toBe(true);
    const listed = await t.gql<{ chats: { id: string }[] }>('{ chats { id } }', {}, bob.token);
    expect(listed.data?.chats.map((x) => x.id)).toEqual([chatId]);
  });

  it('a send that claimed gap notifications and died before delivering them: a later send delivers them', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username]);
    await sendMany(t, ann.token, chatId, 20, 'm', 1);
    await t.gql('mutation($c: ID!) { markRead(chatId: $c, upTo: 20) { id } }', { c: chatId }, ann.token);
    const c = keys.chat(chatId);
    // The 21st message drops bob's oldest; this sender claims the gap with a 1 ms lease and never delivers it.
    await commands.sendMessage({
      chatId,
      sender: ann.username,
      text: 'crashing',
      backlog: 20,
      history: 5,
      claimMs: 1,
      doorbellMax: 16_384,
      contactsMax: 20,
      scheduledId: '',
    });
    expect(await t.redis.hlen(c.gaps)).toBe(1);
    await new Promise((r) => setTimeout(r, 5));

    await send(t, ann.token, chatId, 'next');
    const notes = await t.gql<{ notifications: { kind: string; data: { from: number; to: number } }[] }>(
      '{ notifications { kind data } }',
      {},
      bob.token,
    );
    const gaps = notes.data!.notifications.filter((n) => n.kind === 'gap');
    expect(gaps.map((g) => g.data)).toMatchObject([{ from: 1, to: 3 }]);
    expect(await t.redis.hlen(c.gaps)).toBe(0);
    const state = await t.gql<{ chat: { readUpTo: number } }>(CHAT, { c: chatId }, bob.token);
    expect(state.data?.chat.readUpTo).toBe(3);
  });
});
