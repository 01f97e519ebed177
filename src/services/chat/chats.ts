/**
 * Group chats on pull mailboxes (the book's chapter 6 multi-recipient messaging, without its defects). A chat's
 * keys share its hash tag and each write is one script over them; the chat is the truth about members and read
 * positions, and each user's index of chats lives on the user's slot. Steps across the two slots are ordered so that
 * a crash repeats work and never loses it (docs/subscriptions.md). Work after a committed write is best-effort.
 */
import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { AppError, badInput, conflict, forbidden, notFound } from '../../errors.js';
import type { ChatCommands, ChatMessage, Sent } from '../../redis/chat/commands.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';
import type { ContactService } from './contacts.js';
import type { NotificationService } from './notifications.js';
import { checkPage, type Page } from '../shared/paging.js';
import { userText } from '../shared/text.js';
import { normalizeUsername, type UserService } from '../users/users.js';

export type Message = ChatMessage;

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

/** A chat as one of its members sees it. */
export type MemberState = ChatState & { readUpTo: number };

export interface ChatRead {
  /** The chat's version when it was read (see sendMessage's doorbell: the next version may come with its message). */
  version: number;
  readUpTo: number;
  messages: Message[];
  /** The read returned `first` messages: there may be more after the last one. */
  more: boolean;
}

/** Which members of a chat to list (see members). */
export interface MembersQuery {
  chatId: string;
  prefix?: string | null;
  first: number;
}

interface ReadRequest {
  chatId: string;
  user: string;
  after: number | null;
  first: number;
}

/** A live feed's move of a read position (messageAdded with markRead). */
interface ReadMove {
  chatId: string;
  user: string;
  upTo: number;
}

export interface ChatLimits {
  history: number;
  backlog: number;
  maxMessageLength: number;
  maxMembers: number;
  maxUserChats: number;
}

export interface ChatDeps {
  commands: ChatCommands;
  limits: ChatLimits;
  users: UserService;
  contacts: ContactService;
  notifications: NotificationService;
  log: Logger;
}

/** A chat's messages, per read. */
export const MESSAGES_PAGE: Page = { default: 50, max: 500 };
/** Where a read of a chat's messages starts by default: after this id (0: at the first retained message). */
export const MESSAGES_AFTER_DEFAULT = 0;
/** A chat's members, per autocomplete. */
export const MEMBERS_PAGE: Page = { default: 50, max: 1000 };
/** Whether a new chat is public (anyone may join) when its creator does not say. */
export const IS_PUBLIC_DEFAULT = false;
/** Messages up to this size (bytes of JSON) ride on the doorbell, so live subscribers need not read them. */
export const DOORBELL_MESSAGE_MAX = 16_384;
/** Sending moves the other members to the front of the sender's contacts in chats up to this size only. */
export const CONTACT_CHAT_MAX = 20;
/**
 * How long a chat's members, as a send last listed them, stand for its next sends' contact moves: a burst of messages
 * asks Redis for them once (a member who joined meanwhile moves to the sender's front at a send after that).
 */
const MEMBERS_MEMO_MS = 5000;
/** Chats whose members are remembered so, per process. */
const MEMBERS_MEMO_MAX = 10_000;
/**
 * How long live feeds' moves of read positions (markRead: true) gather before they go out, one command per chat, so a
 * busy chat costs one per this period however many subscribers and messages it has. Feeds do not wait for their
 * moves; a process that dies meanwhile loses at most this much of them (the client gets those messages again, unread).
 */
const MOVES_BATCH_MS = 100;
/** How long a send that claimed gap notifications has to deliver them before a later send claims them again. */
export const GAP_CLAIM_MS = 30_000;
const CHAT_ID = /^[1-9][0-9]{0,15}$/;
const MEMBER_PREFIX = /^[a-z0-9_.-]{0,32}$/;

/** Validates a chat id argument (a positive integer, as a string), named `argument` in the refusal. */
export function parseChatId({ chatId, argument = 'chatId' }: { chatId: string; argument?: string }): string {
  if (!CHAT_ID.test(chatId)) throw badInput(argument, 'must be a chat id (a positive integer)');
  return chatId;
}

/**
 * The error for a chat script's refusal: every status the chat's scripts return, in one place. `user`: the member to
 * remove, or the user to index; `actor`: who acts, and `maxChats`: MAX_USER_CHATS (for TOO_MANY_CHATS).
 */
function refusal(
  { refused }: Refused,
  { chatId, user = '', actor = '', maxChats = 0 }: { chatId: string; user?: string; actor?: string; maxChats?: number },
): Error {
  switch (refused) {
    case STATUS.NOT_FOUND:
      return notFound(`chat ${chatId}`);
    case STATUS.NOT_MEMBER:
      return forbidden(`you are not a member of chat ${chatId}`);
    case STATUS.NOT_PUBLIC:
      return forbidden(`chat ${chatId} is not public; a member must add you`);
    case STATUS.FULL:
      return conflict(`chat ${chatId} is full`);
    case STATUS.NOT_CREATOR:
      return forbidden(`only the creator of chat ${chatId} removes members`);
    case STATUS.NO_SUCH_MEMBER:
      return notFound(`member "${user}" of chat ${chatId}`);
    case STATUS.TOO_MANY_CHATS:
      return conflict(
        user === actor
          ? `you are in ${maxChats} chats, the most a user may be: you must leave one first`
          : `${user} is in ${maxChats} chats, the most a user may be: they must leave one first`,
      );
    default:
      return new Error(`unexpected chat script status ${refused}`);
  }
}

/** The chat as a member sees it, or the refusal of one who is not a member (NOT_FOUND: there is no such chat). */
function asMember(chatId: string, state: ChatState | null): MemberState | Error {
  if (!state) return refusal({ refused: STATUS.NOT_FOUND }, { chatId });
  if (state.readUpTo === null) return refusal({ refused: STATUS.NOT_MEMBER }, { chatId });
  return state as MemberState;
}

export class ChatService {
  private readonly reader = new DataLoader<ReadRequest, ChatRead>((requests) => this.readBatch(requests), {
    cache: false,
  });
  /** Moves of read positions by live feeds, gathered for MOVES_BATCH_MS: one command per chat. */
  private readonly moves = new DataLoader<ReadMove, void>((moves) => (this.moving = this.moveBatch(moves)), {
    cache: false,
    batchScheduleFn: (flush) => {
      const once = () => {
        if (this.flushMoves !== once) return;
        this.flushMoves = undefined;
        flush();
      };
      this.flushMoves = once;
      setTimeout(once, MOVES_BATCH_MS);
    },
  });
  /** Sends the gathered moves now (once); undefined when none wait. */
  private flushMoves: (() => void) | undefined;
  /** The last batch of moves sent. */
  private moving: Promise<void[]> = Promise.resolve([]);
  /** The members each recent send listed (null: too many for contacts), by chat. */
  private readonly membersMemo = new LRUCache<string, { members: string[] | null }>({
    max: MEMBERS_MEMO_MAX,
    ttl: MEMBERS_MEMO_MS,
  });
  private readonly commands: ChatCommands;
  private readonly limits: ChatLimits;
  private readonly users: UserService;
  private readonly contacts: ContactService;
  private readonly notifications: NotificationService;
  private readonly log: Logger;

  constructor(deps: ChatDeps) {
    ({
      commands: this.commands,
      limits: this.limits,
      users: this.users,
      contacts: this.contacts,
      notifications: this.notifications,
      log: this.log,
    } = deps);
  }

  /** Creates a chat of `creator` and `members`, with an optional first message. Returns its id. */
  async createChat(
    creator: string,
    input: { members: readonly string[]; message?: string | null; isPublic?: boolean },
  ): Promise<string> {
    const { isPublic = IS_PUBLIC_DEFAULT } = input;
    const members = [...new Set(input.members.map((m) => normalizeUsername(m, 'members')))].filter(
      (m) => m !== creator,
    );
    if (members.length + 1 > this.limits.maxMembers) {
      throw badInput('members', `a chat has at most ${this.limits.maxMembers} members`);
    }
    const text = input.message == null ? null : this.checkText({ text: input.message, argument: 'message' });
    const unknown = await this.users.unknown({ usernames: members });
    if (unknown.length > 0) throw notFound(`user "${unknown[0]}"`);

    const chatId = await this.commands.nextChatId();
    const users = [creator, ...members];
    const indexed = await Promise.allSettled(users.map((user) => this.index({ user, chatId, actor: creator })));
    const failed = indexed.find((r) => r.status === 'rejected');
    if (failed) {
      // No chat has this id yet, so nobody joined it meanwhile: the entries written go as they are.
      const written = users.filter((_, i) => indexed[i]!.status === 'fulfilled' && indexed[i]!.value);
      await Promise.all(written.map((user) => this.commands.unindexChat({ user, chatId })));
      throw failed.reason;
    }
    const created = await this.commands.createChat({ chatId, creator, isPublic, text: text ?? '', members });
    if (isRefused(created)) throw new Error(`chat id ${chatId} was already taken`);
    await this.afterCommit('createChat', [
      this.contacts.touch(creator, { contacts: members }),
      ...members.map((user) =>
        this.notifications.notify({
          user,
          kind: 'added',
          text: `${creator} added you to chat ${chatId}`,
          data: { chatId, by: creator },
        }),
      ),
    ]);
    return chatId;
  }

  /** `by` (a member) adds `username` at the chat's current last message. */
  async addChatMember(by: string, input: { chatId: string; username: string }): Promise<void> {
    const chatId = parseChatId(input);
    const user = normalizeUsername(input.username);
    await this.requireMember(by, { chatId });
    if ((await this.users.unknown({ usernames: [user] })).length > 0) throw notFound(`user "${user}"`);
    if (await this.enter({ chatId, user, by })) {
      await this.afterCommit('addChatMember', [
        this.contacts.touch(by, { contacts: [user] }),
        this.notifications.notify({
          user,
          kind: 'added',
          text: `${by} added you to chat ${chatId}`,
          data: { chatId, by },
        }),
      ]);
    }
  }

  /** `user` joins a public chat at its current last message (also when it has no message yet). */
  async joinChat(user: string, input: { chatId: string }): Promise<void> {
    const chatId = parseChatId(input);
    const isPublic = await this.commands.isPublic({ chatId });
    if (isPublic === null) throw refusal({ refused: STATUS.NOT_FOUND }, { chatId });
    if (!isPublic) throw refusal({ refused: STATUS.NOT_PUBLIC }, { chatId });
    await this.enter({ chatId, user, by: '' });
  }

  /** Leaves a chat; the last member leaving deletes it. */
  async leaveChat(user: string, input: { chatId: string }): Promise<void> {
    const chatId = parseChatId(input);
    const left = await this.commands.leaveChat({ chatId, member: user, history: this.limits.history, by: '' });
    // Not a member (or no such chat): an index entry a crash left behind still goes, so the user can clear it.
    await this.unindex({ user, chatId });
    if (isRefused(left)) throw refusal(left, { chatId });
  }

  /** The chat's creator removes a member (not themself: they leave). */
  async removeChatMember(by: string, input: { chatId: string; username: string }): Promise<void> {
    const chatId = parseChatId(input);
    const user = normalizeUsername(input.username);
    if (user === by) throw badInput('username', 'to remove yourself, leave the chat');
    const removed = await this.commands.leaveChat({ chatId, member: user, history: this.limits.history, by });
    if (isRefused(removed)) throw refusal(removed, { chatId, user });
    await this.unindex({ user, chatId });
    await this.afterCommit('removeChatMember', [
      this.notifications.notify({
        user,
        kind: 'removed',
        text: `${by} removed you from chat ${chatId}`,
        data: { chatId, by },
      }),
    ]);
  }

  async sendMessage(sender: string, input: { chatId: string; text: string }): Promise<Message> {
    const chatId = parseChatId(input);
    const text = this.checkText({ text: input.text, argument: 'text' });
    const { id, sentAt } = await this.store({ chatId, sender, text, scheduledId: '' });
    return { id, chatId, sender, text, sentAt: new Date(sentAt) };
  }

  /**
   * Sends scheduled message `scheduledId` once: a retry (or a racing worker) within a day of the send sends
   * nothing and gets the id it was sent as. Refuses like `send` (a sender who is no longer a member: FORBIDDEN).
   */
  async sendScheduled(sender: string, input: { chatId: string; text: string; scheduledId: string }): Promise<number> {
    const chatId = parseChatId(input);
    const text = this.checkText({ text: input.text, argument: 'text' });
    return (await this.store({ chatId, sender, text, scheduledId: input.scheduledId })).id;
  }

  /** Stores a message whose text checkText returned. */
  private async store(a: {
    chatId: string;
    sender: string;
    text: string;
    scheduledId: string;
  }): Promise<{ id: number; sentAt: number }> {
    const known = this.membersMemo.get(a.chatId);
    const sent = await this.commands.sendMessage({
      ...a,
      backlog: this.limits.backlog,
      history: this.limits.history,
      claimMs: GAP_CLAIM_MS,
      doorbellMax: DOORBELL_MESSAGE_MAX,
      contactsMax: known ? 0 : CONTACT_CHAT_MAX,
    });
    if ('sentBefore' in sent) return { id: sent.sentBefore, sentAt: 0 };
    if (isRefused(sent)) throw refusal(sent, a);
    // In name order: chats with the same members make the same move, which the contacts skip when it is unchanged.
    if (!known) this.membersMemo.set(a.chatId, { members: sent.members?.sort() ?? null });
    const members = known ? known.members : sent.members;
    await this.afterCommit('sendMessage', [
      members ? this.contacts.touch(a.sender, { contacts: members }) : Promise.resolve(),
      this.deliverGaps(a.chatId, sent.gaps),
    ]);
    return sent;
  }

  /** Moves `user`'s read position up to `upTo` (never backwards); returns the position. */
  async markRead(user: string, input: { chatId: string; upTo: number }): Promise<number> {
    const chatId = parseChatId(input);
    const { upTo } = input;
    if (!Number.isSafeInteger(upTo) || upTo < 0) throw badInput('upTo', 'must be a message id (an integer ≥ 0)');
    const position = await this.commands.markRead({ chatId, member: user, upTo, history: this.limits.history });
    if (isRefused(position)) throw refusal(position, { chatId });
    return position;
  }

  /**
   * Moves `user`'s read position up to `upTo` for a live feed that delivered it (messageAdded with markRead), soon:
   * the moves of MOVES_BATCH_MS go out together, one command per chat, and a failure is logged (a later move
   * supersedes it). Unlike markRead it neither refuses nor trims: a move of someone who is no longer a member is left
   * out (their feed learns so at its next read), and sends trim what everyone has read.
   */
  markDelivered(user: string, input: { chatId: string; upTo: number }): void {
    void this.moves.load({ chatId: input.chatId, user, upTo: input.upTo });
  }

  /** Sends the moves still gathering, and waits for them (the process is stopping). */
  async close(): Promise<void> {
    this.flushMoves?.();
    await this.moving;
  }

  /**
   * `user`'s read position and up to `first` retained messages with an id above `after` (above the read position
   * when `after` is null), read atomically; `more` when there may be more. Refuses non-members. Reads of one chat
   * issued in the same tick (every subscriber of a chat woken by one move) share one script call.
   */
  async read(user: string, input: { chatId: string; after: number | null; first: number }): Promise<ChatRead> {
    const chatId = parseChatId(input);
    const { after, first } = input;
    if (after !== null && (!Number.isSafeInteger(after) || after < 0))
      throw badInput('after', 'must be a message id (an integer ≥ 0)');
    checkPage('first', first, MESSAGES_PAGE.max);
    return this.reader.load({ chatId, user, after, first });
  }

  /** Message `id` of the chat while `viewer` can read it (a member, and not yet trimmed); null otherwise. */
  async message(viewer: string, input: { chatId: string; id: number | null }): Promise<Message | null> {
    const { id } = input;
    if (id === null) return null;
    try {
      const read = await this.read(viewer, { chatId: input.chatId, after: id - 1, first: 1 });
      return read.messages.find((m) => m.id === id) ?? null;
    } catch (err) {
      if (AppError.is(err) && (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND')) return null;
      throw err;
    }
  }

  /** The state of each chat (ids as stored) as `viewer` sees it (null: it does not exist), one script per chat. */
  async states(viewer: string, { chatIds }: { chatIds: readonly string[] }): Promise<(ChatState | null)[]> {
    return Promise.all(
      chatIds.map(async (id) => {
        const s = await this.commands.chatState({ chatId: id, viewer });
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

  /** Each chat (ids as stored) as its member `viewer` sees it, or the error refusing one who is not a member. */
  async memberStates(viewer: string, input: { chatIds: readonly string[] }): Promise<(MemberState | Error)[]> {
    const states = await this.states(viewer, input);
    return states.map((state, i) => asMember(input.chatIds[i]!, state));
  }

  /** Chat `id` as its member `viewer` sees it: null when none has that id, FORBIDDEN when not a member. */
  async chat(viewer: string, input: { id: string }): Promise<MemberState | null> {
    const chatId = parseChatId({ chatId: input.id, argument: 'id' });
    const [state] = await this.states(viewer, { chatIds: [chatId] });
    if (!state) return null;
    const member = asMember(chatId, state);
    if (member instanceof Error) throw member;
    return member;
  }

  /** `viewer`'s chats, most recent activity first (index entries a crash left behind are not shown). */
  async chatsOf(viewer: string): Promise<MemberState[]> {
    const chatIds = await this.commands.indexedChats({ user: viewer });
    const states = await this.states(viewer, { chatIds });
    const mine = states.filter((s): s is MemberState => s !== null && s.readUpTo !== null);
    return mine.sort((a, b) => b.lastActivityAt.getTime() - a.lastActivityAt.getTime() || Number(b.id) - Number(a.id));
  }

  /** Throws NOT_FOUND or FORBIDDEN unless `user` is a member of the chat. */
  async requireMember(user: string, input: { chatId: string }): Promise<MemberState> {
    const chatId = parseChatId(input);
    const [state] = await this.states(user, { chatIds: [chatId] });
    const member = asMember(chatId, state ?? null);
    if (member instanceof Error) throw member;
    return member;
  }

  /** Members whose name starts with `prefix` (case-insensitive; none: every member), sorted, at most `first`. */
  async members(input: MembersQuery): Promise<string[]> {
    const chatId = parseChatId(input);
    const { first } = input;
    checkPage('first', first, MEMBERS_PAGE.max);
    const prefix = (input.prefix ?? '').toLowerCase();
    if (first === 0 || !MEMBER_PREFIX.test(prefix)) return [];
    return this.commands.memberNames({ chatId, prefix, limit: first });
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
          const read = await this.commands.readChat({ chatId, after: after ?? -1, limit: first, readers });
          for (const i of indexes) {
            if (!read) {
              results[i] = refusal({ refused: STATUS.NOT_FOUND }, { chatId });
              continue;
            }
            const position = read.positions[readers.indexOf(requests[i]!.user)]!;
            results[i] =
              position < 0
                ? refusal({ refused: STATUS.NOT_MEMBER }, { chatId })
                : {
                    version: read.version,
                    readUpTo: position,
                    messages: after === null ? read.messages.filter((m) => m.id > position) : read.messages,
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

  /** One command per chat among `moves`, each member's highest move; failures are logged. */
  private async moveBatch(moves: readonly ReadMove[]): Promise<void[]> {
    const byChat = new Map<string, Map<string, number>>();
    for (const { chatId, user, upTo } of moves) {
      const positions = byChat.get(chatId) ?? new Map<string, number>();
      byChat.set(chatId, positions.set(user, Math.max(upTo, positions.get(user) ?? 0)));
    }
    await Promise.all(
      [...byChat].map(([chatId, positions]) =>
        this.commands
          .moveReadPositions({ chatId, positions })
          .catch((err: unknown) => this.log.warn({ err, chatId }, 'moving read positions of live feeds failed')),
      ),
    );
    return moves.map(() => undefined);
  }

  /** The message text as stored (see userText); empty or longer than MAX_MESSAGE_LENGTH: BAD_USER_INPUT naming `argument`. */
  checkText({ text, argument }: { text: string; argument: string }): string {
    return userText(text, argument, this.limits.maxMessageLength);
  }

  /**
   * Adds a chat to `user`'s index, the step before the chat's own write; whether the index changed. Past
   * MAX_USER_CHATS it writes nothing and throws CONFLICT (`actor`: who acts, named "you" when it is `user`).
   */
  private async index({ user, chatId, actor }: { user: string; chatId: string; actor: string }): Promise<boolean> {
    const maxChats = this.limits.maxUserChats;
    const indexed = await this.commands.indexChat({ user, chatId, maxChats });
    if (isRefused(indexed)) throw refusal(indexed, { chatId, user, actor, maxChats });
    return indexed;
  }

  /**
   * Removes a chat from the user's index, then puts it back if a concurrent add or join made them a member. Past
   * MAX_USER_CHATS (another add took the entry's place meanwhile) it stays out: the bound holds, and the member
   * still reads the chat by its id, or leaves it.
   */
  private async unindex({ user, chatId }: { user: string; chatId: string }): Promise<void> {
    if (!(await this.commands.unindexChat({ user, chatId }))) return;
    const [state] = await this.states(user, { chatIds: [chatId] });
    if (state?.readUpTo === null || state?.readUpTo === undefined) return;
    await this.reindex({ user, chatId });
  }

  /** Puts a member's index entry back if it is missing; past MAX_USER_CHATS it stays out (logged). */
  private async reindex({ user, chatId }: { user: string; chatId: string }): Promise<void> {
    const back = await this.commands.indexChat({ user, chatId, maxChats: this.limits.maxUserChats });
    if (isRefused(back)) this.log.warn({ user, chatId }, 'a member left out of their full index of chats');
  }

  /** Waits for the best-effort work that follows a committed write; logs its failures instead of throwing. */
  private async afterCommit(operation: string, work: Promise<unknown>[]): Promise<void> {
    const results = await Promise.allSettled(work);
    for (const r of results) {
      if (r.status === 'rejected')
        this.log.warn({ err: r.reason as unknown, operation }, 'follow-up of a committed write failed');
    }
  }

  /**
   * Index first (refused past MAX_USER_CHATS, before anything is written), then the chat; undoes the index entry it
   * wrote if the chat refuses. An entry found already there may be a concurrent leave's, which that leave removes
   * once it has seen the user is no member: so an add that found one writes it again after the chat's step. Returns
   * whether added.
   */
  private async enter({ chatId, user, by }: { chatId: string; user: string; by: string }): Promise<boolean> {
    const indexed = await this.index({ user, chatId, actor: by || user });
    const joined = await this.commands.joinChat({ chatId, user, by, maxMembers: this.limits.maxMembers });
    if (!isRefused(joined)) {
      if (joined.added && !indexed) await this.reindex({ user, chatId });
      return joined.added;
    }
    if (indexed) await this.unindex({ user, chatId });
    throw refusal(joined, { chatId });
  }

  /**
   * Delivers claimed gaps to the users' mailboxes, clearing each from the chat's outbox; what was dropped while one was
   * being delivered follows at once, from where it ended (no later send is needed, and no id is named twice).
   */
  private async deliverGaps(chatId: string, gaps: Sent['gaps']): Promise<void> {
    await Promise.all(
      gaps.map(async ({ user, ...claimed }) => {
        for (let gap: { from: number; to: number } | null = claimed; gap;) {
          const { from, to } = gap;
          await this.notifications.notify({
            user,
            kind: 'gap',
            text: `Messages ${from} to ${to} of chat ${chatId} were dropped before you read them (backlog limit).`,
            data: { chatId, from, to },
          });
          gap = await this.commands.gapDelivered({ chatId, member: user, from, to, claimMs: GAP_CLAIM_MS });
        }
      }),
    );
  }
}
