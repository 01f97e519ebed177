/**
 * Group chats on pull mailboxes (the book's chapter 6 multi-recipient messaging, without its defects).
 *
 * A chat's keys share its hash tag and each write is one Lua script over them (src/redis/lua/chat-*.lua): the
 * members and their read positions, the messages, the sequence, the doorbell. The chat is the truth about who
 * is a member and what they have read. Each user also has an index of their chats on their own slot; steps
 * that span both slots are ordered so that a crash between them repeats work and never loses it:
 * - joining writes the user's index first, then the chat; an index entry whose chat does not list the user is
 *   ignored by every reader (and undone at once when the chat step refuses);
 * - leaving writes the chat first, then the index;
 * - a gap notification waits in the chat's outbox until it is delivered to the user's mailbox, and is removed
 *   only after (a crash in between delivers it again, GAP_CLAIM_MS later, at the chat's next message).
 * After a leave, the index step checks the chat again and puts the entry back if a concurrent add or join made
 * the user a member meanwhile. Work after a write has committed (contacts, notifications) is best-effort: its
 * failure is logged, never reported as the write's failure (a client would retry a write that happened).
 */
import DataLoader from 'dataloader';
import { badInput, forbidden, notFound } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import type { ChatKeys } from '../../redis/chat/keys.js';
import type { ContactService } from './contacts.js';
import type { NotificationService } from './notifications.js';
import { checkPage } from '../shared/paging.js';
import { userText } from '../shared/text.js';
import { normalizeUsername, type UserService } from '../users/users.js';
import type { Logger } from 'pino';

export interface Message {
  id: number;
  chatId: string;
  sender: string;
  text: string;
  sentAt: Date;
}

export interface ChatState {
  id: string;
  isPublic: boolean;
  createdAt: Date;
  lastActivityAt: Date;
  lastMessageId: number;
  memberCount: number;
  /** The viewer's read position; null when the viewer is not a member. */
  readUpTo: number | null;
}

export interface ChatRead {
  /** The chat's version when it was read (see chat-send's doorbell: the next version may come with its message). */
  version: number;
  readUpTo: number;
  messages: Message[];
  /** The read returned `first` messages: there may be more after the last one. */
  more: boolean;
}

interface ReadRequest {
  chatId: string;
  user: string;
  after: number | null;
  first: number;
}

export interface ChatLimits {
  history: number;
  backlog: number;
  maxMessageLength: number;
  maxMembers: number;
}

export const MESSAGES_PAGE_MAX = 500;
/** Messages up to this size (bytes of JSON) ride on the doorbell, so live subscribers need not read them. */
export const DOORBELL_MESSAGE_MAX = 16_384;
/** Sending moves the other members to the front of the sender's contacts in chats up to this size only. */
export const CONTACT_CHAT_MAX = 20;
/** How long a send that claimed gap notifications has to deliver them before a later send claims them again. */
export const GAP_CLAIM_MS = 30_000;
export const MEMBERS_PAGE_MAX = 1000;
const CHAT_ID = /^[1-9][0-9]{0,15}$/;

/** Validates a chat id argument (a positive integer, as a string). */
export function parseChatId(raw: string, argument = 'chatId'): string {
  if (!CHAT_ID.test(raw)) throw badInput(argument, 'must be a chat id (a positive integer)');
  return raw;
}

/** The error for a chat script's refusal status (-1 no such chat, -2 not a member). */
function refusal(code: number, chatId: string): Error {
  switch (code) {
    case -1:
      return notFound(`chat ${chatId}`);
    case -2:
      return forbidden(`you are not a member of chat ${chatId}`);
    default:
      return new Error(`unexpected chat script status ${code}`);
  }
}

export function parseMessage(chatId: string, json: string): Message {
  const raw = JSON.parse(json) as { id: number; sender: string; text: string; sentAt: number };
  return { id: raw.id, chatId, sender: raw.sender, text: raw.text, sentAt: new Date(raw.sentAt) };
}

export class ChatService {
  private readonly reader = new DataLoader<ReadRequest, ChatRead>((requests) => this.readBatch(requests), { cache: false });

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ChatKeys,
    private readonly limits: ChatLimits,
    private readonly users: UserService,
    private readonly contacts: ContactService,
    private readonly notifications: NotificationService,
    private readonly log: Logger,
  ) {}

  /** Creates a chat of `creator` and `members`, with an optional first message. Returns its id. */
  async create(creator: string, rawMembers: readonly string[], text: string | null, isPublic: boolean): Promise<string> {
    const members = [...new Set(rawMembers.map((m) => normalizeUsername(m, 'members')))].filter((m) => m !== creator);
    if (members.length + 1 > this.limits.maxMembers) {
      throw badInput('members', `a chat has at most ${this.limits.maxMembers} members`);
    }
    if (text !== null) text = this.checkText(text, 'message');
    const unknown = await this.users.unknown(members);
    if (unknown.length > 0) throw notFound(`user "${unknown[0]}"`);

    const id = String(await this.redis.incr(this.keys.chatIds()));
    await Promise.all([creator, ...members].map((m) => this.index(m, 'add', id)));
    const c = this.keys.chat(id);
    const created = await this.redis.chatCreate(
      c.meta, c.seq, c.version, c.members, c.names, c.messages,
      creator, isPublic ? 1 : 0, text ?? '', c.bell, ...members,
    );
    if (created < 0) throw new Error(`chat id ${id} was already taken`);
    await this.afterCommit('createChat', [
      this.contacts.touch(creator, members),
      ...members.map((m) => this.notifications.notify(m, 'added', `${creator} added you to chat ${id}`, { chatId: id, by: creator })),
    ]);
    return id;
  }

  /** `by` (a member) adds `rawUser` at the chat's current last message. */
  async addMember(chatId: string, by: string, rawUser: string): Promise<void> {
    const user = normalizeUsername(rawUser);
    await this.requireMember(chatId, by);
    if ((await this.users.unknown([user])).length > 0) throw notFound(`user "${user}"`);
    if (await this.enter(chatId, user, by)) {
      await this.afterCommit('addChatMember', [
        this.contacts.touch(by, [user]),
        this.notifications.notify(user, 'added', `${by} added you to chat ${chatId}`, { chatId, by }),
      ]);
    }
  }

  /** `user` joins a public chat at its current last message (also when it has no message yet). */
  async join(chatId: string, user: string): Promise<void> {
    const isPublic = await this.redis.hget(this.keys.chat(chatId).meta, 'public');
    if (isPublic === null) throw notFound(`chat ${chatId}`);
    if (isPublic !== '1') throw forbidden(`chat ${chatId} is not public; a member must add you`);
    await this.enter(chatId, user, '');
  }

  /** Leaves a chat; the last member leaving deletes it. */
  async leave(chatId: string, user: string): Promise<void> {
    const c = this.keys.chat(chatId);
    const status = await this.redis.chatLeave(
      c.meta, c.seq, c.version, c.members, c.names, c.messages, c.gaps, c.scheduled, c.scheduledAt,
      user, this.limits.history, c.bell, '',
    );
    // Not a member (or no such chat): an index entry a crash left behind still goes, so the user can clear it.
    await this.unindex(user, chatId);
    if (status < 0) throw refusal(status, chatId);
  }

  /** The chat's creator removes a member (not themself: they leave). */
  async removeMember(chatId: string, by: string, rawUser: string): Promise<void> {
    const user = normalizeUsername(rawUser);
    if (user === by) throw badInput('username', 'to remove yourself, leave the chat');
    const c = this.keys.chat(chatId);
    const status = await this.redis.chatLeave(
      c.meta, c.seq, c.version, c.members, c.names, c.messages, c.gaps, c.scheduled, c.scheduledAt,
      user, this.limits.history, c.bell, by,
    );
    if (status === -3) throw forbidden(`only the creator of chat ${chatId} removes members`);
    if (status === -4) throw notFound(`member "${user}" of chat ${chatId}`);
    if (status < 0) throw refusal(status, chatId);
    await this.unindex(user, chatId);
    await this.afterCommit('removeChatMember', [
      this.notifications.notify(user, 'removed', `${by} removed you from chat ${chatId}`, { chatId, by }),
    ]);
  }

  async send(chatId: string, sender: string, rawText: string): Promise<Message> {
    const text = this.checkText(rawText, 'text');
    const { id, sentAt } = await this.store(chatId, sender, text, '');
    return { id, chatId, sender, text, sentAt: new Date(sentAt) };
  }

  /**
   * Sends scheduled message `scheduledId` once: a retry (or a racing worker) within a day of the send sends
   * nothing and gets the id it was sent as. Refuses like `send` (a sender who is no longer a member: FORBIDDEN).
   */
  async sendScheduled(chatId: string, sender: string, text: string, scheduledId: string): Promise<number> {
    return (await this.store(chatId, sender, this.checkText(text, 'text'), scheduledId)).id;
  }

  /** Stores a message whose text checkText returned. */
  private async store(chatId: string, sender: string, text: string, scheduledId: string): Promise<{ id: number; sentAt: number }> {
    const c = this.keys.chat(chatId);
    const reply = await this.redis.chatSend(
      c.meta, c.seq, c.version, c.members, c.messages, c.gaps, c.scheduled, c.scheduledAt,
      sender, text, this.limits.backlog, this.limits.history, c.bell, GAP_CLAIM_MS, DOORBELL_MESSAGE_MAX, CONTACT_CHAT_MAX,
      scheduledId,
    );
    const [id, sentAt, members, ...gaps] = reply as [number, number, string, ...(string | number)[]];
    if (id === -3) return { id: sentAt, sentAt: 0 }; // sent before, as message `reply[1]`
    if (id < 0) throw refusal(id, chatId);
    await this.afterCommit('sendMessage', [
      members ? this.contacts.touch(sender, members.split(',')) : Promise.resolve(),
      this.deliverGaps(chatId, gaps),
    ]);
    return { id, sentAt };
  }

  /** Moves `user`'s read position up to `upTo` (never backwards); returns the position. */
  async markRead(chatId: string, user: string, upTo: number): Promise<number> {
    if (!Number.isSafeInteger(upTo) || upTo < 0) throw badInput('upTo', 'must be a message id (an integer ≥ 0)');
    const c = this.keys.chat(chatId);
    const position = await this.redis.chatMarkRead(c.meta, c.seq, c.members, c.messages, user, upTo, this.limits.history);
    if (position < 0) throw refusal(position, chatId);
    return position;
  }

  /**
   * `user`'s read position and up to `first` retained messages with an id above `after` (above the read position
   * when `after` is null), read atomically; `more` when there may be more. Refuses non-members. Reads of one chat
   * issued in the same tick (every subscriber of a chat woken by one move) share one script call.
   */
  async read(chatId: string, user: string, after: number | null, first: number): Promise<ChatRead> {
    if (after !== null && (!Number.isSafeInteger(after) || after < 0)) throw badInput('after', 'must be a message id (an integer ≥ 0)');
    checkPage('first', first, MESSAGES_PAGE_MAX);
    return this.reader.load({ chatId, user, after, first });
  }

  /** The state of each chat as `viewer` sees it (null for a chat that does not exist), one script per chat. */
  async states(chatIds: readonly string[], viewer: string): Promise<(ChatState | null)[]> {
    return Promise.all(
      chatIds.map(async (id) => {
        const c = this.keys.chat(id);
        const s = await this.redis.chatState(c.meta, c.seq, c.members, viewer);
        if (s.length === 0) return null;
        const [isPublic, createdAt, lastAt, lastMessageId, memberCount, readUpTo] = s as [number, number, number, number, number, number];
        return {
          id,
          isPublic: isPublic === 1,
          createdAt: new Date(createdAt),
          lastActivityAt: new Date(lastAt),
          lastMessageId,
          memberCount,
          readUpTo: readUpTo < 0 ? null : readUpTo,
        };
      }),
    );
  }

  /** Throws NOT_FOUND or FORBIDDEN unless `user` is a member of the chat. */
  async requireMember(chatId: string, user: string): Promise<ChatState> {
    const [state] = await this.states([chatId], user);
    if (!state) throw notFound(`chat ${chatId}`);
    if (state.readUpTo === null) throw forbidden(`you are not a member of chat ${chatId}`);
    return state;
  }

  /** Members whose name starts with `prefix` (case-insensitive), sorted, at most `first`. */
  async members(chatId: string, prefix: string, first: number): Promise<string[]> {
    checkPage('first', first, MEMBERS_PAGE_MAX);
    const p = prefix.toLowerCase();
    if (first === 0 || !/^[a-z0-9_.-]{0,32}$/.test(p)) return [];
    return this.redis.zrangebylex(this.keys.chat(chatId).names, `[${p}`, `[${p}\x7f`, 'LIMIT', 0, first);
  }

  /** The chats in `user`'s index (possibly including ones a crash left half-joined: check with states()). */
  chatIdsOf(user: string): Promise<string[]> {
    return this.redis.zrange(this.keys.user(user).chats, '0', '-1');
  }

  /** What a live subscription of one chat watches: its version key and doorbell. */
  head(chatId: string): { key: string; channel: string } {
    const c = this.keys.chat(chatId);
    return { key: c.version, channel: c.bell };
  }

  /** What an all-chats subscription watches to follow joins and leaves: the user's index version. */
  indexHead(user: string): { key: string; channel: string } {
    const u = this.keys.user(user);
    return { key: u.chatsVersion, channel: u.bell };
  }

  /** One chat-read script per (chat, after, first) among `requests`, for all their readers at once. */
  private async readBatch(requests: readonly ReadRequest[]): Promise<(ChatRead | Error)[]> {
    const groups = new Map<string, number[]>();
    requests.forEach((r, i) => {
      const key = `${r.chatId}:${r.after ?? -1}:${r.first}`;
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    const results: (ChatRead | Error)[] = [];
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const { chatId, after, first } = requests[indexes[0]!]!;
        const readers = [...new Set(indexes.map((i) => requests[i]!.user))];
        const c = this.keys.chat(chatId);
        try {
          const reply = await this.redis.chatRead(c.meta, c.members, c.messages, c.version, after ?? -1, first, ...readers);
          const [version, ...positions] = reply.slice(0, readers.length + 1) as number[];
          const rows = reply.slice(readers.length + 1) as string[];
          const messages = rows.map((json) => parseMessage(chatId, json));
          for (const i of indexes) {
            if (reply.length === 0) {
              results[i] = refusal(-1, chatId);
              continue;
            }
            const position = positions[readers.indexOf(requests[i]!.user)]!;
            results[i] =
              position < 0
                ? refusal(-2, chatId)
                : {
                    version: version!,
                    readUpTo: position,
                    messages: after === null ? messages.filter((m) => m.id > position) : messages,
                    more: rows.length === first,
                  };
          }
        } catch (err) {
          for (const i of indexes) results[i] = err instanceof Error ? err : new Error(String(err));
        }
      }),
    );
    return results;
  }

  /** The message text as stored (see userText); empty or longer than MAX_MESSAGE_LENGTH: BAD_USER_INPUT naming `argument`. */
  checkText(text: string, argument: string): string {
    return userText(text, argument, this.limits.maxMessageLength);
  }

  private index(user: string, op: 'add' | 'remove', chatId: string): Promise<0 | 1> {
    const u = this.keys.user(user);
    return this.redis.userChats(u.chats, u.chatsVersion, op, chatId, u.bell);
  }

  /** Removes a chat from the user's index, then puts it back if a concurrent add or join made them a member. */
  private async unindex(user: string, chatId: string): Promise<void> {
    if ((await this.index(user, 'remove', chatId)) === 0) return;
    const [state] = await this.states([chatId], user);
    if (state?.readUpTo !== null && state?.readUpTo !== undefined) await this.index(user, 'add', chatId);
  }

  /** Waits for the best-effort work that follows a committed write; logs its failures instead of throwing. */
  private async afterCommit(operation: string, work: Promise<unknown>[]): Promise<void> {
    const results = await Promise.allSettled(work);
    for (const r of results) {
      if (r.status === 'rejected') this.log.warn({ err: r.reason instanceof Error ? r.reason.message : String(r.reason), operation }, 'follow-up of a committed write failed');
    }
  }

  /** Index first, then the chat; undoes the index entry it wrote if the chat refuses. Returns whether added. */
  private async enter(chatId: string, user: string, by: string): Promise<boolean> {
    const indexed = await this.index(user, 'add', chatId);
    const c = this.keys.chat(chatId);
    const [status] = await this.redis.chatJoin(c.meta, c.seq, c.version, c.members, c.names, user, by, c.bell, this.limits.maxMembers);
    if (status! >= 0) return status === 1;
    if (indexed === 1) await this.unindex(user, chatId);
    if (status === -3) throw forbidden(`chat ${chatId} is not public; a member must add you`);
    if (status === -4) throw badInput('chatId', `chat ${chatId} is full (${this.limits.maxMembers} members)`);
    throw refusal(status!, chatId);
  }

  /** Delivers claimed gap entries ([user, from, to]...) to the users' mailboxes, then clears them from the outbox. */
  private async deliverGaps(chatId: string, entries: (string | number)[]): Promise<void> {
    const gaps = this.keys.chat(chatId).gaps;
    const deliveries: Promise<unknown>[] = [];
    for (let i = 0; i + 2 < entries.length; i += 3) {
      const [user, from, to] = [String(entries[i]), Number(entries[i + 1]), Number(entries[i + 2])];
      deliveries.push(
        this.notifications
          .notify(user, 'gap', `Messages ${from} to ${to} of chat ${chatId} were dropped before you read them (backlog limit).`, {
            chatId,
            from,
            to,
          })
          .then(() => this.redis.chatGapDone(gaps, user, from, to)),
      );
    }
    await Promise.all(deliveries);
  }
}
