/** The chat domain's scripts (chats, users' mailboxes, scheduled messages), with named arguments. */
import type { RedisClient } from '../clients.js';
import type { CoordinationKeys } from '../coordination/keys.js';
import { script } from '../scripts.js';
import { STATUS, refused, type Refused } from '../status.js';
import type { ChatKeys } from './keys.js';

const createChatScript = script<number>('createChat');
const sendMessageScript = script<(number | string)[]>('sendMessage');
const gapDeliveredScript = script<0 | 1>('gapDelivered');
const joinChatScript = script<number[]>('joinChat');
const leaveChatScript = script<number>('leaveChat');
const markReadScript = script<number>('markRead');
const readChatScript = script<(number | string)[]>('readChat');
const chatStateScript = script<number[]>('chatState');
const indexChatScript = script<0 | 1>('indexChat');
const touchContactsScript = script<number>('touchContacts');
const notifyScript = script<number>('notify');
const scheduleMessageScript = script<0 | 1>('scheduleMessage');
const claimScheduledMessageScript = script<(string | null)[]>('claimScheduledMessage');
const finishScheduledMessageScript = script<0 | 1>('finishScheduledMessage');
const cancelScheduledMessageScript = script<number>('cancelScheduledMessage');

/** Creates chat `chatId` of `creator` and `members`, with a first message unless `text` is ''; its last message id. */
export async function createChat(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; creator: string; isPublic: boolean; text: string; members: readonly string[] },
): Promise<number | Refused> {
  const c = k.chat(a.chatId);
  const last = await createChatScript(
    redis,
    [c.meta, c.seq, c.version, c.members, c.names, c.messages],
    [a.creator, a.isPublic ? 1 : 0, a.text, c.bell, ...a.members],
  );
  return last < 0 ? refused(last) : last;
}

/** A stored message, the members to touch as the sender's contacts (null past `contactsMax`), the gaps claimed. */
export interface Sent {
  id: number;
  sentAt: number;
  members: string[] | null;
  gaps: { user: string; from: number; to: number }[];
}

/** Stores the next message of chat `chatId`; `scheduledId` ('' for none) is sent once, then answers `sentBefore`. */
export async function sendMessage(
  redis: RedisClient,
  k: ChatKeys,
  a: {
    chatId: string;
    sender: string;
    text: string;
    backlog: number;
    history: number;
    claimMs: number;
    doorbellMax: number;
    contactsMax: number;
    scheduledId: string;
  },
): Promise<Sent | { sentBefore: number } | Refused> {
  const c = k.chat(a.chatId);
  const reply = await sendMessageScript(
    redis,
    [c.meta, c.seq, c.version, c.members, c.messages, c.gaps, c.scheduled, c.scheduledAt],
    [a.sender, a.text, a.backlog, a.history, c.bell, a.claimMs, a.doorbellMax, a.contactsMax, a.scheduledId],
  );
  const [id, sentAt, members, ...gaps] = reply as [number, number, string, ...(string | number)[]];
  if (id === STATUS.SENT_BEFORE) return { sentBefore: sentAt };
  if (id < 0) return refused(id);
  const claimed: Sent['gaps'] = [];
  for (let i = 0; i + 2 < gaps.length; i += 3)
    claimed.push({ user: String(gaps[i]), from: Number(gaps[i + 1]), to: Number(gaps[i + 2]) });
  return { id, sentAt, members: members ? members.split(',') : null, gaps: claimed };
}

/** Clears the gap of `member` from the chat's outbox after its delivery, unless it grew meanwhile. */
export async function gapDelivered(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; member: string; from: number; to: number },
): Promise<void> {
  await gapDeliveredScript(redis, [k.chat(a.chatId).gaps], [a.member, a.from, a.to]);
}

/** Adds `user` to chat `chatId` (`by` a member, or '' for a user joining a public chat) at its last message id. */
export async function joinChat(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; user: string; by: string; maxMembers: number },
): Promise<{ added: boolean; last: number } | Refused> {
  const c = k.chat(a.chatId);
  const [status, last] = await joinChatScript(
    redis,
    [c.meta, c.seq, c.version, c.members, c.names],
    [a.user, a.by, c.bell, a.maxMembers],
  );
  return status! < 0 ? refused(status!) : { added: status === 1, last: last! };
}

/** Removes `member` from chat `chatId` (`by` its creator, or '' for leaving): 'left', or 'deleted' with the last member. */
export async function leaveChat(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; member: string; history: number; by: string },
): Promise<'left' | 'deleted' | Refused> {
  const c = k.chat(a.chatId);
  const status = await leaveChatScript(
    redis,
    [c.meta, c.seq, c.version, c.members, c.names, c.messages, c.gaps, c.scheduled, c.scheduledAt],
    [a.member, a.history, c.bell, a.by],
  );
  return status < 0 ? refused(status) : status === 2 ? 'deleted' : 'left';
}

/** Moves the read position of `member` up to `upTo` (never back); the position. */
export async function markRead(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; member: string; upTo: number; history: number },
): Promise<number | Refused> {
  const c = k.chat(a.chatId);
  const position = await markReadScript(redis, [c.meta, c.seq, c.members, c.messages], [a.member, a.upTo, a.history]);
  return position < 0 ? refused(position) : position;
}

/**
 * The chat's version, each reader's read position (STATUS.NOT_MEMBER, negative, when not a member) and up to
 * `limit` messages (JSON) after `after` (-1: after the lowest position), read at once; null when the chat does not
 * exist.
 */
export async function readChat(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; after: number; limit: number; readers: readonly string[] },
): Promise<{ version: number; positions: number[]; messages: string[] } | null> {
  const c = k.chat(a.chatId);
  const reply = await readChatScript(
    redis,
    [c.meta, c.members, c.messages, c.version],
    [a.after, a.limit, ...a.readers],
  );
  if (reply.length === 0) return null;
  return {
    version: reply[0] as number,
    positions: reply.slice(1, a.readers.length + 1) as number[],
    messages: reply.slice(a.readers.length + 1) as string[],
  };
}

/** What the Chat type shows of chat `chatId` to `viewer`; null when it does not exist. */
export async function chatState(
  redis: RedisClient,
  k: ChatKeys,
  a: { chatId: string; viewer: string },
): Promise<{
  isPublic: boolean;
  createdAt: number;
  lastAt: number;
  lastMessageId: number;
  memberCount: number;
  readUpTo: number | null;
} | null> {
  const c = k.chat(a.chatId);
  const s = await chatStateScript(redis, [c.meta, c.seq, c.members], [a.viewer]);
  if (s.length === 0) return null;
  const [isPublic, createdAt, lastAt, lastMessageId, memberCount, readUpTo] = s as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    isPublic: isPublic === 1,
    createdAt,
    lastAt,
    lastMessageId,
    memberCount,
    readUpTo: readUpTo < 0 ? null : readUpTo,
  };
}

/** Adds chat `chatId` to, or removes it from, the index of `user`'s chats; whether the index changed. */
export async function indexChat(
  redis: RedisClient,
  k: ChatKeys,
  a: { user: string; op: 'add' | 'remove'; chatId: string },
): Promise<boolean> {
  const u = k.user(a.user);
  return (await indexChatScript(redis, [u.chats, u.chatsVersion], [a.op, a.chatId, u.bell])) === 1;
}

/** Moves `names` to the front of `user`'s recent contacts (the last ends up first), keeping `cap`. */
export async function touchContacts(
  redis: RedisClient,
  k: ChatKeys,
  a: { user: string; cap: number; names: readonly string[] },
): Promise<void> {
  await touchContactsScript(redis, [k.user(a.user).contacts], [a.cap, ...a.names]);
}

/** Puts a notification in `user`'s mailbox (keeping the newest `cap`); its id. */
export function notify(
  redis: RedisClient,
  k: ChatKeys,
  a: { user: string; kind: string; text: string; data: Record<string, unknown> | undefined; cap: number },
): Promise<number> {
  const u = k.user(a.user);
  return notifyScript(
    redis,
    [u.inbox, u.inboxSeq],
    [a.kind, a.text, a.data ? JSON.stringify(a.data) : '', a.cap, u.bell],
  );
}

/** Records scheduled message `id` and enqueues `task` to send it at `sendAt`; false past `pendingMax` pending (nothing written). */
export async function scheduleMessage(
  redis: RedisClient,
  k: ChatKeys & CoordinationKeys,
  a: { id: string; chatId: string; sender: string; text: string; sendAt: number; task: string; pendingMax: number },
): Promise<boolean> {
  const s = k.scheduled();
  const q = k.queue(s.queueName);
  const reply = await scheduleMessageScript(
    redis,
    [s.record(a.id), s.pending(a.sender, a.chatId), q.ready, q.delayed],
    [a.id, a.chatId, a.sender, a.text, a.sendAt, a.task, a.pendingMax],
  );
  return reply === 1;
}

/** Marks scheduled message `id` SENDING for the worker about to send it; what it is, or null when there is none. */
export async function claimScheduledMessage(
  redis: RedisClient,
  k: ChatKeys,
  a: { id: string },
): Promise<{ status: string; chatId: string; sender: string; text: string } | null> {
  const [status, chatId, sender, text] = await claimScheduledMessageScript(redis, [k.scheduled().record(a.id)], []);
  return status && chatId && sender && text != null ? { status, chatId, sender, text } : null;
}

/** A claimed scheduled message ends SENT (`value` its message id) or FAILED (`value` the reason); false when finished already. */
export async function finishScheduledMessage(
  redis: RedisClient,
  k: ChatKeys,
  a: {
    id: string;
    chatId: string;
    sender: string;
    status: 'SENT' | 'FAILED';
    value: string | number;
    retentionMs: number;
    doneKept: number;
  },
): Promise<boolean> {
  const s = k.scheduled();
  const field = a.status === 'SENT' ? 'messageId' : 'reason';
  const reply = await finishScheduledMessageScript(
    redis,
    [s.record(a.id), s.pending(a.sender, a.chatId), s.done(a.sender, a.chatId)],
    [a.id, a.status, field, a.value, a.retentionMs, a.doneKept],
  );
  return reply === 1;
}

/** `user` cancels their pending scheduled message `id`: 'cancelled', or 'late' once it is being sent or finished. */
export async function cancelScheduledMessage(
  redis: RedisClient,
  k: ChatKeys & CoordinationKeys,
  a: { id: string; chatId: string; user: string; retentionMs: number; doneKept: number },
): Promise<'cancelled' | 'late' | Refused> {
  const s = k.scheduled();
  const q = k.queue(s.queueName);
  const status = await cancelScheduledMessageScript(
    redis,
    [s.record(a.id), s.pending(a.user, a.chatId), s.done(a.user, a.chatId), q.ready, q.delayed],
    [a.id, a.user, a.retentionMs, a.doneKept],
  );
  return status < 0 ? refused(status) : status === 1 ? 'cancelled' : 'late';
}
