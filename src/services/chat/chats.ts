/**
 * Group chats on pull mailboxes (the book's chapter 6 multi-recipient messaging, without its defects). A chat's
 * keys share its hash tag and each write is one script over them; the chat is the truth about members and read
 * positions, and each user's index of chats lives on the user's slot. Steps across the two slots are ordered so that
 * a crash repeats work and never loses it (docs/subscriptions.md). Work after a committed write is best-effort.
 */
import DataLoader from 'dataloader';
import { badInput, forbidden, notFound } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/chat/commands.js';
import type { ChatKeys } from '../../redis/chat/keys.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';
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
  /** The chat's version when it was read (see sendMessage's doorbell: the next version may come with its message). */
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

/** The error for a chat script's refusal: every status the chat's scripts return, in one place. */
function refusal({ refused }: Refused, chatId: string, user = ''): Error {
  switch (refused) {
    case STATUS.NOT_FOUND:
      return notFound(`chat ${chatId}`);
    case STATUS.NOT_MEMBER:
      return forbidden(`you are not a member of chat ${chatId}`);
    case STATUS.NOT_PUBLIC:
      return forbidden(`chat ${chatId} is not public; a member must add you`);
    case STATUS.FULL:
      return badInput('chatId', `chat ${chatId} is full`);
    case STATUS.NOT_CREATOR:
      return forbidden(`only the creator of chat ${chatId} removes members`);
    case STATUS.NO_SUCH_MEMBER:
      return notFound(`member "${user}" of chat ${chatId}`);
    default:
      return new Error(`unexpected chat script status ${refused}`);
  }
}

export function parseMessage(chatId: string, json: string): Message {
  const raw = JSON.parse(json) as { id: number; sender: string; text: string; sentAt: number };
  return { id: raw.id, chatId, sender: raw.sender, text: raw.text, sentAt: new Date(raw.sentAt) };
}

export class ChatService {
  private readonly reader = new DataLoader<ReadRequest, ChatRead>((requests) => this.readBatch(requests), {
    cache: false,
  });

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
  async createChat(
    creator: string,
    rawMembers: readonly string[],
    text: string | null,
    isPublic: boolean,
  ): Promise<string> {
    const members = [...new Set(rawMembers.map((m) => normalizeUsername(m, 'members')))].filter((m) => m !== creator);
    if (members.length + 1 > this.limits.maxMembers) {
      throw badInput('members', `a chat has at most ${this.limits.maxMembers} members`);
    }
    if (text !== null) text = this.checkText(text, 'message');
    const unknown = await this.users.unknown({ usernames: members });
    if (unknown.length > 0) throw notFound(`user "${unknown[0]}"`);

    const id = String(await this.redis.incr(this.keys.chatIds()));
    await Promise.all([creator, ...members].map((m) => this.index(m, 'add', id)));
    const created = await commands.createChat(this.redis, this.keys, {
      chatId: id,
      creator,
      isPublic,
      text: text ?? '',
      members,
    });
    if (isRefused(created)) throw new Error(`chat id ${id} was already taken`);
    await this.afterCommit('createChat', [
      this.contacts.touch(creator, members),
      ...members.map((m) =>
        this.notifications.notify(m, 'added', `${creator} added you to chat ${id}`, { chatId: id, by: creator }),
      ),
    ]);
    return id;
  }

  /** `by` (a member) adds `rawUser` at the chat's current last message. */
  async addChatMember(chatId: string, by: string, rawUser: string): Promise<void> {
    const user = normalizeUsername(rawUser);
    await this.requireMember(chatId, by);
    if ((await this.users.unknown({ usernames: [user] })).length > 0) throw notFound(`user "${user}"`);
    if (await this.enter(chatId, user, by)) {
      await this.afterCommit('addChatMember', [
        this.contacts.touch(by, [user]),
        this.notifications.notify(user, 'added', `${by} added you to chat ${chatId}`, { chatId, by }),
      ]);
    }
  }

  /** `user` joins a public chat at its current last message (also when it has no message yet). */
  async joinChat(chatId: string, user: string): Promise<void> {
    const isPublic = await this.redis.hget(this.keys.chat(chatId).meta, 'public');
    if (isPublic === null) throw notFound(`chat ${chatId}`);
    if (isPublic !== '1') throw forbidden(`chat ${chatId} is not public; a member must add you`);
    await this.enter(chatId, user, '');
  }

  /** Leaves a chat; the last member leaving deletes it. */
  async leaveChat(chatId: string, user: string): Promise<void> {
    const left = await commands.leaveChat(this.redis, this.keys, {
      chatId,
      member: user,
      history: this.limits.history,
      by: '',
    });
    // Not a member (or no such chat): an index entry a crash left behind still goes, so the user can clear it.
    await this.unindex(user, chatId);
    if (isRefused(left)) throw refusal(left, chatId);
  }

  /** The chat's creator removes a member (not themself: they leave). */
  async removeChatMember(chatId: string, by: string, rawUser: string): Promise<void> {
    const user = normalizeUsername(rawUser);
    if (user === by) throw badInput('username', 'to remove yourself, leave the chat');
    const removed = await commands.leaveChat(this.redis, this.keys, {
      chatId,
      member: user,
      history: this.limits.history,
      by,
    });
    if (isRefused(removed)) throw refusal(removed, chatId, user);
    await this.unindex(user, chatId);
    await this.afterCommit('removeChatMember', [
      this.notifications.notify(user, 'removed', `${by} removed you from chat ${chatId}`, { chatId, by }),
    ]);
  }

  async sendMessage(chatId: string, sender: string, rawText: string): Promise<Message> {
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
  private async store(
    chatId: string,
    sender: string,
    text: string,
    scheduledId: string,
  ): Promise<{ id: number; sentAt: number }> {
    const sent = await commands.sendMessage(this.redis, this.keys, {
      chatId,
      sender,
      text,
      backlog: this.limits.backlog,
      history: this.limits.history,
      claimMs: GAP_CLAIM_MS,
      doorbellMax: DOORBELL_MESSAGE_MAX,
      contactsMax: CONTACT_CHAT_MAX,
      scheduledId,
    });
    if ('sentBefore' in sent) return { id: sent.sentBefore, sentAt: 0 };
    if (isRefused(sent)) throw refusal(sent, chatId);
    await this.afterCommit('sendMessage', [
      sent.members ? this.contacts.touch(sender, sent.members) : Promise.resolve(),
      this.deliverGaps(chatId, sent.gaps),
    ]);
    return sent;
  }

  /** Moves `user`'s read position up to `upTo` (never backwards); returns the position. */
  async markRead(chatId: string, user: string, upTo: number): Promise<number> {
    if (!Number.isSafeInteger(upTo) || upTo < 0) throw badInput('upTo', 'must be a message id (an integer ≥ 0)');
    const position = await commands.markRead(this.redis, this.keys, {
      chatId,
      member: user,
      upTo,
      history: this.limits.history,
    });
    if (isRefused(position)) throw refusal(position, chatId);
    return position;
  }

  /**
   * `user`'s read position and up to `first` retained messages with an id above `after` (above the read position
   * when `after` is null), read atomically; `more` when there may be more. Refuses non-members. Reads of one chat
   * issued in the same tick (every subscriber of a chat woken by one move) share one script call.
   */
  async read(chatId: string, user: string, after: number | null, first: number): Promise<ChatRead> {
    if (after !== null && (!Number.isSafeInteger(after) || after < 0))
      throw badInput('after', 'must be a message id (an integer ≥ 0)');
    checkPage('first', first, MESSAGES_PAGE_MAX);
    return this.reader.load({ chatId, user, after, first });
  }

  /** The state of each chat as `viewer` sees it (null for a chat that does not exist), one script per chat. */
  async states(chatIds: readonly string[], viewer: string): Promise<(ChatState | null)[]> {
    return Promise.all(
      chatIds.map(async (id) => {
        const s = await commands.chatState(this.redis, this.keys, { chatId: id, viewer });
        if (!s) return null;
        const { isPublic, createdAt, lastAt, lastMessageId, memberCount, readUpTo } = s;
        return {
          id,
          isPublic,
          createdAt: new Date(createdAt),
          lastActivityAt: new Date(lastAt),
          lastMessageId,
          memberCount,
          readUpTo,
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

  /** One readChat script per (chat, after, first) among `requests`, for all their readers at once. */
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
        try {
          const read = await commands.readChat(this.redis, this.keys, {
            chatId,
            after: after ?? -1,
            limit: first,
            readers,
          });
          const messages = (read?.messages ?? []).map((json) => parseMessage(chatId, json));
          for (const i of indexes) {
            if (!read) {
              results[i] = refusal({ refused: STATUS.NOT_FOUND }, chatId);
              continue;
            }
            const position = read.positions[readers.indexOf(requests[i]!.user)]!;
            results[i] =
              position < 0
                ? refusal({ refused: STATUS.NOT_MEMBER }, chatId)
                : {
                    version: read.version,
                    readUpTo: position,
                    messages: after === null ? messages.filter((m) => m.id > position) : messages,
                    more: read.messages.length === first,
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

  private index(user: string, op: 'add' | 'remove', chatId: string): Promise<boolean> {
    return commands.indexChat(this.redis, this.keys, { user, op, chatId });
  }

  /** Removes a chat from the user's index, then puts it back if a concurrent add or join made them a member. */
  private async unindex(user: string, chatId: string): Promise<void> {
    if (!(await this.index(user, 'remove', chatId))) return;
    const [state] = await this.states([chatId], user);
    if (state?.readUpTo !== null && state?.readUpTo !== undefined) await this.index(user, 'add', chatId);
  }

  /** Waits for the best-effort work that follows a committed write; logs its failures instead of throwing. */
  private async afterCommit(operation: string, work: Promise<unknown>[]): Promise<void> {
    const results = await Promise.allSettled(work);
    for (const r of results) {
      if (r.status === 'rejected')
        this.log.warn({ err: r.reason as unknown, operation }, 'follow-up of a committed write failed');
    }
  }

  /** Index first, then the chat; undoes the index entry it wrote if the chat refuses. Returns whether added. */
  private async enter(chatId: string, user: string, by: string): Promise<boolean> {
    const indexed = await this.index(user, 'add', chatId);
    const joined = await commands.joinChat(this.redis, this.keys, {
      chatId,
      user,
      by,
      maxMembers: this.limits.maxMembers,
    });
    if (!isRefused(joined)) return joined.added;
    if (indexed) await this.unindex(user, chatId);
    throw refusal(joined, chatId);
  }

  /** Delivers claimed gaps to the users' mailboxes, then clears them from the chat's outbox. */
  private async deliverGaps(chatId: string, gaps: commands.Sent['gaps']): Promise<void> {
    await Promise.all(
      gaps.map(({ user, from, to }) =>
        this.notifications
          .notify(
            user,
            'gap',
            `Messages ${from} to ${to} of chat ${chatId} were dropped before you read them (backlog limit).`,
            { chatId, from, to },
          )
          .then(() => commands.gapDelivered(this.redis, this.keys, { chatId, member: user, from, to })),
      ),
    );
  }
}
