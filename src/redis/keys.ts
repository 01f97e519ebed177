/**
 * Every Redis key the product uses, built in one place. Keys that one script, transaction or pipeline
 * touches together share a hash tag (the part in braces), so the product runs unchanged on Redis Cluster.
 * The deployment's KEY_PREFIX goes in front, outside the tag.
 */
export type Keys = ReturnType<typeof createKeys>;

export function createKeys(prefix: string) {
  const k = (s: string) => prefix + s;
  return {
    /** hash: username, passwordHash, createdAt */
    userProfile: (username: string) => k(`user:{${username}}:profile`),
    /** sorted set, every score 0: lowercase usernames, read with ZRANGEBYLEX */
    userDirectory: () => k('users:{dir}:names'),
    /** string: the username a session token (by its SHA-256) belongs to, with an idle expiry */
    session: (tokenHash: string) => k(`session:{${tokenHash}}`),
    /** string "1" while maintenance mode is on */
    maintenance: () => k('ops:{config}:maintenance'),
    /** string: JSON configuration of one component (the book's config:<type>:<component>) */
    config: (type: string, component: string) => k(`ops:{config}:${type}:${component}`),

    /** string counter: the last chat id handed out */
    chatIds: () => k('ids:{chat}'),
    /** the keys of one chat, all on the chat's slot */
    chat: (id: string) => {
      const c = (s: string) => k(`chat:{${id}}:${s}`);
      return {
        /** hash: public (0/1), createdAt, createdBy, lastAt (ms of the last message, or of creation) */
        meta: c('meta'),
        /** string counter: the last message id */
        seq: c('seq'),
        /** string counter: 1 at creation, bumped by every message, join and leave; what subscription pollers watch */
        version: c('ver'),
        /** sorted set: member → read position (the last message id they have read) */
        members: c('members'),
        /** sorted set, every score 0: member names, for ZRANGEBYLEX autocomplete */
        names: c('names'),
        /** sorted set: message id → JSON {id, sender, text, sentAt} */
        messages: c('msgs'),
        /** hash: member → "from:to:claimedUntil", gap notifications not yet delivered (an outbox) */
        gaps: c('gaps'),
        /** sharded pub/sub channel: the doorbell, rung with "<version key> <new version>" (just the key: deleted) */
        bell: c('bell'),
      };
    },
    /** the keys of one user's own mailboxes and indexes, all on the user's slot */
    user: (username: string) => {
      const u = (s: string) => k(`user:{${username}}:${s}`);
      return {
        /** sorted set: chat id → ms joined; an index of memberships, verified against each chat */
        chats: u('chats'),
        /** string counter bumped when `chats` changes: what all-chats subscriptions watch */
        chatsVersion: u('chats:ver'),
        /** list: recent contacts, newest first, at most CONTACTS_MAX */
        contacts: u('contacts'),
        /** sorted set: notification id → JSON {id, kind, text, data, createdAt} (the single-recipient mailbox) */
        inbox: u('inbox'),
        /** string counter: the last notification id */
        inboxSeq: u('inbox:seq'),
        /** sharded pub/sub channel: the doorbell, rung with "<key> <new value>" when `chatsVersion` or `inboxSeq` moves */
        bell: u('bell'),
      };
    },
  };
}
