/**
 * The chat domain's door to Redis: chats, users' mailboxes (chat index, contacts, notifications) and scheduled
 * messages, each step one script or one command on its object's slot. The services of src/services/chat/ reach
 * Redis only through the object chatCommands() returns. Scheduled messages live on the slot of the coordination
 * queue that sends them, so their scripts name that queue's keys too.
 */
import type { RedisClient } from '../clients.js';
import { coordinationKeys } from '../coordination/keys.js';
import type { Keyspace } from '../keys.js';
import type { Head } from '../mailbox/commands.js';
import type { ReplicaWait } from '../replicas.js';
import { startingWith } from '../replies.js';
import { script } from '../scripts.js';
import { STATUS, refused, type Refused } from '../status.js';
import { chatKeys } from './keys.js';

const createChatScript = script<number>('createChat');
const sendMessageScript = script<(number | string)[]>('sendMessage');
const gapDeliveredScript = script<number[]>('gapDelivered');
const joinChatScript = script<number[]>('joinChat');
const leaveChatScript = script<number>('leaveChat');
const markReadScript = script<number>('markRead');
const readChatScript = script<(number | string)[]>('readChat');
const chatStateScript = script<number[]>('chatState');
const indexChatScript = script<number>('indexChat');
const touchContactsScript = script<0 | 1>('touchContacts');
const notifyScript = script<number>('notify');
const scheduleMessageScript = script<0 | 1>('scheduleMessage');
const claimScheduledMessageScript = script<(string | null)[]>('claimScheduledMessage');
const finishScheduledMessageScript = script<0 | 1>('finishScheduledMessage');
const cancelScheduledMessageScript = script<number>('cancelScheduledMessage');

export type ChatCommands = ReturnType<typeof chatCommands>;

/** A chat message as stored (its JSON) and read back. */
export interface ChatMessage {
  id: number;
  chatId: string;
  sender: string;
  text: string;
  sentAt: Date;
}

/** A stored message, the members to touch as the sender's contacts (null past `contactsMax`, or not asked), the gaps claimed. */
export interface Sent {
  id: number;
  sentAt: number;
  members: string[] | null;
  gaps: { user: string; from: number; to: number }[];
}

/** What the Chat type shows of a chat to one viewer. */
export interface StoredChatState {
  isPublic: boolean;
  createdAt: number;
  lastAt: number;
  lastMessageId: number;
  memberCount: number;
  /** null when the viewer is not a member. */
  readUpTo: number | null;
}

/** A notification as stored in a user's mailbox; `kind` as the notifier named it. */
export interface StoredNotification {
  id: number;
  kind: string;
  text: string;
  data: Record<string, unknown> | null;
  createdAt: Date;
}

/** A scheduled message's record; `status` as stored (PENDING, SENDING, SENT, CANCELLED or FAILED). */
export interface ScheduledRecord {
  chatId: string;
  sender: string;
  text: string;
  sendAt: Date;
  status: string;
  messageId: number | null;
  reason: string | null;
}

/** A message of chat `chatId` from its stored JSON. */
function chatMessage(a: { chatId: string; json: string }): ChatMessage {
  const raw = JSON.parse(a.json) as { id: number; sender: string; text: string; sentAt: number };
  return { id: raw.id, chatId: a.chatId, sender: raw.sender, text: raw.text, sentAt: new Date(raw.sentAt) };
}

function storedNotification(json: string): StoredNotification {
  const raw = JSON.parse(json) as {
    id: number;
    kind: string;
    text: string;
    data?: Record<string, unknown>;
    createdAt: number;
  };
  return { id: raw.id, kind: raw.kind, text: raw.text, data: raw.data ?? null, createdAt: new Date(raw.createdAt) };
}

/**
 * `replicated`: what the writes whose loss would break a promise (a message, a read position, a scheduled message)
 * wait on before they are acknowledged (src/redis/replicas.ts).
 */
export function chatCommands(redis: RedisClient, space: Keyspace, replicated: ReplicaWait) {
  // With replicas to wait for, a message's doorbell rings once they have it: a subscriber shown a message that the
  // master's death then loses would skip the next message given its id.
  const ringLater = replicated.replicas > 0;
  const k = chatKeys(space);
  const s = k.scheduled();
  const queue = coordinationKeys(space).queue(s.queueName);
  return {
    /** The queue scheduled messages are sent through. */
    scheduledQueue: s.queueName,

    /** A chat id never handed out before. */
    async nextChatId(): Promise<string> {
      return String(await redis.incr(k.chatIds()));
    },

    /** Creates chat `chatId` of `creator` and `members`, with a first message unless `text` is ''; its last message id. */
    async createChat(a: {
      chatId: string;
      creator: string;
      isPublic: boolean;
      text: string;
      members: readonly string[];
    }): Promise<number | Refused> {
      const c = k.chat(a.chatId);
      const last = await createChatScript(
        redis,
        [c.meta, c.seq, c.version, c.members, c.names, c.messages],
        [a.creator, a.isPublic ? 1 : 0, a.text, c.bell, ...a.members],
      );
      return last < 0 ? refused(last) : last;
    },

    /** Stores the next message of chat `chatId`; `scheduledId` ('' for none) is sent once, then answers `sentBefore`. */
    async sendMessage(a: {
      chatId: string;
      sender: string;
      text: string;
      backlog: number;
      history: number;
      claimMs: number;
      doorbellMax: number;
      contactsMax: number;
      scheduledId: string;
    }): Promise<Sent | { sentBefore: number } | Refused> {
      const c = k.chat(a.chatId);
      const reply = await sendMessageScript(
        redis,
        [c.meta, c.seq, c.version, c.members, c.messages, c.gaps, c.scheduled, c.scheduledAt],
        [
          a.sender,
          a.text,
          a.backlog,
          a.history,
          ringLater ? '' : c.bell,
          a.claimMs,
          a.doorbellMax,
          a.contactsMax,
          a.scheduledId,
        ],
      );
      const [id, sentAt, members, ring, ...gaps] = reply as [number, number, string, string, ...(string | number)[]];
      if (id === STATUS.SENT_BEFORE) return { sentBefore: sentAt };
      if (id < 0) return refused(id);
      await replicated(c.messages);
      if (ring) await redis.spublish(c.bell, ring);
      const claimed: Sent['gaps'] = [];
      for (let i = 0; i + 2 < gaps.length; i += 3)
        claimed.push({ user: String(gaps[i]), from: Number(gaps[i + 1]), to: Number(gaps[i + 2]) });
      return { id, sentAt, members: members ? members.split(',') : null, gaps: claimed };
    },

    /** The message a ring of chat `chatId`'s doorbell carried (`data`: its JSON, as stored). */
    ringMessage(a: { chatId: string; data: string }): ChatMessage {
      return chatMessage({ chatId: a.chatId, json: a.data });
    },

    /**
     * Clears the gap of `member` from the chat's outbox after its delivery; when it grew meanwhile, keeps and returns
     * the rest, claimed for `claimMs`, for the caller to deliver next (null: nothing left for the caller).
     */
    async gapDelivered(a: {
      chatId: string;
      member: string;
      from: number;
      to: number;
      claimMs: number;
    }): Promise<{ from: number; to: number } | null> {
      const rest = await gapDeliveredScript(redis, [k.chat(a.chatId).gaps], [a.member, a.from, a.to, a.claimMs]);
      return rest.length === 2 ? { from: rest[0]!, to: rest[1]! } : null;
    },

    /** Whether chat `chatId` is public; null when it does not exist. */
    async isPublic(a: { chatId: string }): Promise<boolean | null> {
      const flag = await redis.hget(k.chat(a.chatId).meta, 'public');
      return flag === null ? null : flag === '1';
    },

    /** Adds `user` to chat `chatId` (`by` a member, or '' for a user joining a public chat) at its last message id. */
    async joinChat(a: {
      chatId: string;
      user: string;
      by: string;
      maxMembers: number;
    }): Promise<{ added: boolean; last: number } | Refused> {
      const c = k.chat(a.chatId);
      const [status, last] = await joinChatScript(
        redis,
        [c.meta, c.seq, c.version, c.members, c.names],
        [a.user, a.by, c.bell, a.maxMembers],
      );
      return status! < 0 ? refused(status!) : { added: status === 1, last: last! };
    },

    /** Removes `member` from chat `chatId` (`by` its creator, or '' for leaving): 'left', or 'deleted' with the last member. */
    async leaveChat(a: {
      chatId: string;
      member: string;
      history: number;
      by: string;
    }): Promise<'left' | 'deleted' | Refused> {
      const c = k.chat(a.chatId);
      const status = await leaveChatScript(
        redis,
        [c.meta, c.seq, c.version, c.members, c.names, c.messages, c.gaps, c.scheduled, c.scheduledAt],
        [a.member, a.history, c.bell, a.by],
      );
      return status < 0 ? refused(status) : status === 2 ? 'deleted' : 'left';
    },

    /** Moves the read position of `member` up to `upTo` (never back); the position. */
    async markRead(a: { chatId: string; member: string; upTo: number; history: number }): Promise<number | Refused> {
      const c = k.chat(a.chatId);
      const position = await markReadScript(
        redis,
        [c.meta, c.seq, c.members, c.messages],
        [a.member, a.upTo, a.history],
      );
      if (position < 0) return refused(position);
      await replicated(c.members);
      return position;
    },

    /**
     * Moves the read positions of several members of one chat forward (never back) in one command (ZADD XX GT):
     * those who are no longer members are left out. Neither trims nor refuses (markRead does both).
     */
    async moveReadPositions(a: { chatId: string; positions: ReadonlyMap<string, number> }): Promise<void> {
      const args = [...a.positions].flatMap(([member, upTo]) => [upTo, member]);
      await redis.zadd(k.chat(a.chatId).members, 'XX', 'GT', ...args);
      await replicated(k.chat(a.chatId).members);
    },

    /**
     * The chat's version, each reader's read position (STATUS.NOT_MEMBER, negative, when not a member) and up to
     * `limit` messages after `after` (-1: after the lowest position), read at once; null when the chat does not
     * exist.
     */
    async readChat(a: {
      chatId: string;
      after: number;
      limit: number;
      readers: readonly string[];
    }): Promise<{ version: number; positions: number[]; messages: ChatMessage[] } | null> {
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
        messages: (reply.slice(a.readers.length + 1) as string[]).map((json) =>
          chatMessage({ chatId: a.chatId, json }),
        ),
      };
    },

    /** What the Chat type shows of chat `chatId` to `viewer`; null when it does not exist. */
    async chatState(a: { chatId: string; viewer: string }): Promise<StoredChatState | null> {
      const c = k.chat(a.chatId);
      const s = await chatStateScript(redis, [c.meta, c.seq, c.members, c.messages], [a.viewer]);
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
    },

    /** Member names of chat `chatId` starting with `prefix` (lower case), in order, at most `limit`. */
    memberNames(a: { chatId: string; prefix: string; limit: number }): Promise<string[]> {
      return redis.zrangebylex(k.chat(a.chatId).names, ...startingWith(a.prefix), 'LIMIT', 0, a.limit);
    },

    /** What a live subscription of chat `chatId` watches: its version key and doorbell. */
    chatHead(a: { chatId: string }): Head {
      const c = k.chat(a.chatId);
      return { key: c.version, channel: c.bell };
    },

    /**
     * Adds chat `chatId` to the index of `user`'s chats; whether the index changed. Refused (TOO_MANY_CHATS) when
     * the index holds `maxChats` chats and not this one.
     */
    async indexChat(a: { user: string; chatId: string; maxChats: number }): Promise<boolean | Refused> {
      const u = k.user(a.user);
      const reply = await indexChatScript(redis, [u.chats, u.chatsVersion], ['add', a.chatId, u.bell, a.maxChats]);
      return reply < 0 ? refused(reply) : reply === 1;
    },

    /** Removes chat `chatId` from the index of `user`'s chats; whether the index changed. */
    async unindexChat(a: { user: string; chatId: string }): Promise<boolean> {
      const u = k.user(a.user);
      return (await indexChatScript(redis, [u.chats, u.chatsVersion], ['remove', a.chatId, u.bell, 0])) === 1;
    },

    /** The chats in `user`'s index. */
    indexedChats(a: { user: string }): Promise<string[]> {
      return redis.zrange(k.user(a.user).chats, '0', '-1');
    },

    /** What an all-chats subscription of `user` watches to follow joins and leaves: the index's version. */
    indexHead(a: { user: string }): Head {
      const u = k.user(a.user);
      return { key: u.chatsVersion, channel: u.bell };
    },

    /** Moves `names` to the front of `user`'s recent contacts (the last ends up first), keeping `cap`. */
    async touchContacts(a: { user: string; cap: number; names: readonly string[] }): Promise<void> {
      await touchContactsScript(redis, [k.user(a.user).contacts], [a.cap, ...a.names]);
    },

    /** `user`'s recent contacts, newest first. */
    contacts(a: { user: string }): Promise<string[]> {
      return redis.lrange(k.user(a.user).contacts, 0, -1);
    },

    /** Removes `contact` from `user`'s recent contacts; false when it was not there. */
    async removeContact(a: { user: string; contact: string }): Promise<boolean> {
      return (await redis.lrem(k.user(a.user).contacts, 0, a.contact)) > 0;
    },

    /** Puts a notification in `user`'s mailbox (keeping the newest `cap`); its id. */
    notify(a: {
      user: string;
      kind: string;
      text: string;
      data: Record<string, unknown> | undefined;
      cap: number;
    }): Promise<number> {
      const u = k.user(a.user);
      return notifyScript(
        redis,
        [u.inbox, u.inboxSeq],
        [a.kind, a.text, a.data ? JSON.stringify(a.data) : '', a.cap, u.bell],
      );
    },

    /** `user`'s notifications with an id above `after`, oldest first, at most `limit`. */
    async notifications(a: { user: string; after: number; limit: number }): Promise<StoredNotification[]> {
      const rows = await redis.zrangebyscore(k.user(a.user).inbox, `(${a.after}`, '+inf', 'LIMIT', 0, a.limit);
      return rows.map(storedNotification);
    },

    /** Deletes `user`'s notifications up to id `upTo`, in one transaction with counting those left; how many. */
    async ackNotifications(a: { user: string; upTo: number }): Promise<number> {
      const inbox = k.user(a.user).inbox;
      const results = await redis.multi().zremrangebyscore(inbox, '-inf', a.upTo).zcard(inbox).exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('acknowledgement transaction aborted');
      return results[1]![1] as number;
    },

    /** What a live subscription of `user`'s notifications watches: the mailbox's sequence, and its doorbell. */
    inboxHead(a: { user: string }): Head {
      const u = k.user(a.user);
      return { key: u.inboxSeq, channel: u.bell };
    },

    /** Records scheduled message `id` and enqueues `task` to send it at `sendAt`; false past `pendingMax` pending (nothing written). */
    async scheduleMessage(a: {
      id: string;
      chatId: string;
      sender: string;
      text: string;
      sendAt: number;
      task: string;
      pendingMax: number;
    }): Promise<boolean> {
      const reply = await scheduleMessageScript(
        redis,
        [s.record(a.id), s.pending(a.sender, a.chatId), queue.ready, queue.delayed],
        [a.id, a.chatId, a.sender, a.text, a.sendAt, a.task, a.pendingMax, queue.bell],
      );
      if (reply === 1) await replicated(s.record(a.id));
      return reply === 1;
    },

    /** Scheduled message `id`; null when there is none (never, or expired). */
    async scheduledMessage(a: { id: string }): Promise<ScheduledRecord | null> {
      const r = await redis.hgetall(s.record(a.id));
      if (!r.chatId || !r.sender || r.text === undefined || !r.sendAt || !r.status) return null;
      return {
        chatId: r.chatId,
        sender: r.sender,
        text: r.text,
        sendAt: new Date(Number(r.sendAt)),
        status: r.status,
        messageId: r.messageId ? Number(r.messageId) : null,
        reason: r.reason ?? null,
      };
    },

    /** The chat and the sender of scheduled message `id`; null when there is none. */
    async scheduledOwner(a: { id: string }): Promise<{ chatId: string; sender: string } | null> {
      const [chatId, sender] = await redis.hmget(s.record(a.id), 'chatId', 'sender');
      return chatId && sender ? { chatId, sender } : null;
    },

    /** The ids of `sender`'s scheduled messages in chat `chatId`: the pending ones, then the recently finished. */
    async scheduledIds(a: { sender: string; chatId: string }): Promise<string[]> {
      const [pending, done] = await Promise.all([
        redis.zrange(s.pending(a.sender, a.chatId), '0', '-1'),
        redis.zrange(s.done(a.sender, a.chatId), '0', '-1'),
      ]);
      return [...pending, ...done];
    },

    /** Marks scheduled message `id` SENDING for the worker about to send it; what it is, or null when there is none. */
    async claimScheduledMessage(a: {
      id: string;
    }): Promise<{ status: string; chatId: string; sender: string; text: string } | null> {
      const [status, chatId, sender, text] = await claimScheduledMessageScript(redis, [s.record(a.id)], []);
      return status && chatId && sender && text != null ? { status, chatId, sender, text } : null;
    },

    /** A claimed scheduled message ends SENT (`value` its message id) or FAILED (`value` the reason); false when finished already. */
    async finishScheduledMessage(a: {
      id: string;
      chatId: string;
      sender: string;
      status: 'SENT' | 'FAILED';
      value: string | number;
      retentionMs: number;
      doneKept: number;
    }): Promise<boolean> {
      const field = a.status === 'SENT' ? 'messageId' : 'reason';
      const reply = await finishScheduledMessageScript(
        redis,
        [s.record(a.id), s.pending(a.sender, a.chatId), s.done(a.sender, a.chatId)],
        [a.id, a.status, field, a.value, a.retentionMs, a.doneKept],
      );
      return reply === 1;
    },

    /** `user` cancels their pending scheduled message `id`: 'cancelled', or 'late' once it is being sent or finished. */
    async cancelScheduledMessage(a: {
      id: string;
      chatId: string;
      user: string;
      retentionMs: number;
      doneKept: number;
    }): Promise<'cancelled' | 'late' | Refused> {
      const status = await cancelScheduledMessageScript(
        redis,
        [s.record(a.id), s.pending(a.user, a.chatId), s.done(a.user, a.chatId), queue.ready, queue.delayed],
        [a.id, a.user, a.retentionMs, a.doneKept],
      );
      return status < 0 ? refused(status) : status === 1 ? 'cancelled' : 'late';
    },
  };
}
