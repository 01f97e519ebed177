/** Keys of chats, users' mailboxes (chat index, contacts, notifications) and scheduled messages. */
import type { Keyspace } from '../keys.js';

export type ChatKeys = ReturnType<typeof chatKeys>;

/** The queue scheduled messages are sent through; their records live on its slot. */
export const SCHEDULED_QUEUE = 'scheduled';

export function chatKeys({ key }: Keyspace) {
  return {
    /** string counter: the last chat id handed out */
    chatIds: () => key('ids', 'chat'),
    /** the keys of one chat, all on the chat's slot */
    chat: (id: string) => ({
      /** hash: public (0/1), createdAt, createdBy, lastAt (ms of the last message, or of creation) */
      meta: key('chat', id, 'meta'),
      /** string counter: the last message id */
      seq: key('chat', id, 'seq'),
      /** string counter: 1 at creation, bumped by every message, join and leave; what subscription pollers watch */
      version: key('chat', id, 'ver'),
      /** sorted set: member → read position (the last message id they have read) */
      members: key('chat', id, 'members'),
      /** sorted set, every score 0: member names, for ZRANGEBYLEX autocomplete */
      names: key('chat', id, 'names'),
      /** sorted set: message id → JSON {id, sender, text, sentAt} */
      messages: key('chat', id, 'msgs'),
      /** hash: member → "from:to:claimedUntil", gap notifications not yet delivered (an outbox) */
      gaps: key('chat', id, 'gaps'),
      /** hash: scheduled message id → the message id it was sent as (so a retried send sends nothing) */
      scheduled: key('chat', id, 'scheduled'),
      /** sorted set: scheduled message id → when it was sent (ms); memos older than a day are forgotten */
      scheduledAt: key('chat', id, 'scheduled', 'at'),
      /** sharded pub/sub channel: the doorbell, rung with "<version key> <new version>" (just the key: deleted) */
      bell: key('chat', id, 'bell'),
    }),
    /** the keys of one user's own mailboxes and indexes, all on the user's slot */
    user: (username: string) => ({
      /** sorted set: chat id → ms joined; an index of memberships, verified against each chat */
      chats: key('user', username, 'chats'),
      /** string counter bumped when `chats` changes: what all-chats subscriptions watch */
      chatsVersion: key('user', username, 'chats', 'ver'),
      /** list: recent contacts, newest first, at most CONTACTS_MAX */
      contacts: key('user', username, 'contacts'),
      /** sorted set: notification id → JSON {id, kind, text, data, createdAt} (the single-recipient mailbox) */
      inbox: key('user', username, 'inbox'),
      /** string counter: the last notification id */
      inboxSeq: key('user', username, 'inbox', 'seq'),
      /** sharded pub/sub channel: the doorbell, rung with "<key> <new value>" when `chatsVersion` or `inboxSeq` moves */
      bell: key('user', username, 'bell'),
    }),
    /** scheduled messages live on the slot of the queue that sends them, so scheduling is one script */
    scheduled: () => ({
      queueName: SCHEDULED_QUEUE,
      /** hash: chatId, sender, text, sendAt, createdAt, status, messageId | reason, task (its queue entry);
       *  expires once the message is sent, cancelled or failed */
      record: (id: string) => key('queue', SCHEDULED_QUEUE, 'msg', id),
      /** sorted set: a user's pending scheduled messages in one chat, id → sendAt */
      pending: (username: string, chatId: string) => key('queue', SCHEDULED_QUEUE, 'msg', 'pending', username, chatId),
      /** sorted set: a user's most recently finished ones in one chat, id → finished at (ms) */
      done: (username: string, chatId: string) => key('queue', SCHEDULED_QUEUE, 'msg', 'done', username, chatId),
    }),
  };
}
