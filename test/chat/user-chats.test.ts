/**
 * A user is in at most MAX_USER_CHATS chats: createChat (for the creator and for each member), addChatMember and
 * joinChat refuse one more with CONFLICT, and write nothing (no chat, no index entry, no membership). A chat has at
 * most MAX_CHAT_MEMBERS members: createChat with more is BAD_USER_INPUT, and adding to or joining a full chat CONFLICT.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { CHAT, CREATE_CHAT, createChat } from '../support/chats.js';

let t: TestApp;
let keys: ReturnType<typeof keysOf>;
beforeAll(async () => {
  t = await startTestApp({ MAX_USER_CHATS: '3' });
  keys = keysOf(t.config.keyPrefix);
});

const ADD = 'mutation($c: ID!, $u: String!) { addChatMember(chatId: $c, username: $u) { id } }';
const JOIN = 'mutation($c: ID!) { joinChat(chatId: $c) { id } }';
const LEAVE = 'mutation($c: ID!) { leaveChat(chatId: $c) }';

async function chatsOf(token: string): Promise<string[]> {
  const r = await t.gql<{ chats: { id: string }[] }>('{ chats { id } }', {}, token);
  return r.data!.chats.map((c) => c.id).sort();
}

const indexed = async (username: string) => (await t.redis.zrange(keys.user(username).chats, '0', '-1')).sort();
const lastChatId = async () => Number(await t.redis.get(keys.chatIds()));

async function memberCount(chatId: string, token: string): Promise<number> {
  const r = await t.gql<{ chat: { memberCount: number } }>(CHAT, { c: chatId }, token);
  return r.data!.chat.memberCount;
}

describe('MAX_USER_CHATS (3 here)', () => {
  it('refuses a 4th chat by createChat, addChatMember and joinChat, writing nothing; after a leave it works', async () => {
    const [bob, carol, dan] = await Promise.all([t.signUp(), t.signUp(), t.signUp()]);
    const bobs = [
      await createChat(t, bob.token, []),
      await createChat(t, bob.token, []),
      await createChat(t, bob.token, []),
    ];
    const open = await createChat(t, carol.token, [dan.username], undefined, true);
    const bobsChats = await chatsOf(bob.token);
    expect(bobsChats).toEqual([...bobs].sort());

    // createChat with bob as a member: refused, and nothing is written for anyone (carol and dan were under it).
    const before = await lastChatId();
    const [carolsBefore, dansBefore] = await Promise.all([chatsOf(carol.token), indexed(dan.username)]);
    const created = await t.gql(CREATE_CHAT, { m: [dan.username, bob.username], t: 'hi' }, carol.token);
    expect(created.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(created.errors?.[0]?.message).toBe(
      `${bob.username} is in 3 chats, the most a user may be: they must leave one first`,
    );
    expect(await chatsOf(carol.token)).toEqual(carolsBefore);
    expect(await indexed(carol.username)).toEqual([open]);
    expect(await indexed(dan.username)).toEqual(dansBefore);
    expect(await indexed(bob.username)).toEqual([...bobs].sort());
    const after = await lastChatId();
    for (let id = before + 1; id <= after; id++) expect(await t.redis.exists(keys.chat(String(id)).meta)).toBe(0);

    // bob creating a 4th himself.
    const own = await t.gql(CREATE_CHAT, { m: [carol.username] }, bob.token);
    expect(own.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(own.errors?.[0]?.message).toBe('you are in 3 chats, the most a user may be: you must leave one first');
    expect(await indexed(carol.username)).toEqual([open]);

    // Added by a member, or joining a public chat: refused, the membership unchanged.
    const added = await t.gql(ADD, { c: open, u: bob.username }, carol.token);
    expect(added.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(added.errors?.[0]?.message).toBe(
      `${bob.username} is in 3 chats, the most a user may be: they must leave one first`,
    );
    const joined = await t.gql(JOIN, { c: open }, bob.token);
    expect(joined.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(joined.errors?.[0]?.message).toBe('you are in 3 chats, the most a user may be: you must leave one first');
    expect(await memberCount(open, carol.token)).toBe(2);
    expect((await t.gql(CHAT, { c: open }, bob.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await chatsOf(bob.token)).toEqual(bobsChats);

    // A chat bob is in already is no 4th: adding him again is no refusal.
    expect((await t.gql(ADD, { c: bobs[0], u: bob.username }, bob.token)).errors).toBeUndefined();

    // After leaving one, each way in works again.
    expect((await t.gql(LEAVE, { c: bobs[2] }, bob.token)).errors).toBeUndefined();
    expect((await t.gql(ADD, { c: open, u: bob.username }, carol.token)).errors).toBeUndefined();
    expect(await memberCount(open, carol.token)).toBe(3);
    expect(await chatsOf(bob.token)).toEqual([bobs[0]!, bobs[1]!, open].sort());

    expect((await t.gql(LEAVE, { c: open }, bob.token)).errors).toBeUndefined();
    expect((await t.gql(JOIN, { c: open }, bob.token)).errors).toBeUndefined();
    expect(await chatsOf(bob.token)).toEqual([bobs[0]!, bobs[1]!, open].sort());

    expect((await t.gql(LEAVE, { c: open }, bob.token)).errors).toBeUndefined();
    const fourth = await createChat(t, carol.token, [bob.username]);
    expect(await chatsOf(bob.token)).toEqual([bobs[0]!, bobs[1]!, fourth].sort());
  });
});

describe('MAX_CHAT_MEMBERS (3 here)', () => {
  it('refuses createChat with more (BAD_USER_INPUT), and addChatMember or joinChat to a full chat (CONFLICT), writing nothing', async () => {
    const small = await startTestApp({ MAX_CHAT_MEMBERS: '3' });
    const [ann, bob, carol, dan] = await Promise.all([small.signUp(), small.signUp(), small.signUp(), small.signUp()]);
    const tooMany = await small.gql(CREATE_CHAT, { m: [bob.username, carol.username, dan.username] }, ann.token);
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(tooMany.errors?.[0]?.message).toBe('members: a chat has at most 3 members');

    const full = await createChat(small, ann.token, [bob.username, carol.username], undefined, true);
    const refusals = [
      await small.gql(ADD, { c: full, u: dan.username }, ann.token),
      await small.gql(JOIN, { c: full }, dan.token),
    ];
    for (const r of refusals) {
      expect(r.errors?.[0]?.extensions?.code).toBe('CONFLICT');
      expect(r.errors?.[0]?.message).toBe(`chat ${full} is full`);
    }
    expect(await small.redis.zcard(keysOf(small.config.keyPrefix).user(dan.username).chats)).toBe(0);
    const count = async () =>
      (await small.gql<{ chat: { memberCount: number } }>(CHAT, { c: full }, ann.token)).data!.chat.memberCount;
    expect(await count()).toBe(3);
    // A member leaving makes room.
    expect((await small.gql(LEAVE, { c: full }, carol.token)).errors).toBeUndefined();
    expect((await small.gql(JOIN, { c: full }, dan.token)).errors).toBeUndefined();
    expect(await count()).toBe(3);
  });
});
