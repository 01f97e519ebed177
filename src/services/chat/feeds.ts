/**
 * The live feeds behind `messageAdded` and `notificationAdded`: MessageStreams over a viewer's chats (one chat, or
 * all of them through the viewer's chat index) and over their notification mailbox. A stream reconnecting starts
 * again from the read position kept in Redis, so nothing unread is lost.
 */
import type { Repeater } from '@repeaterjs/repeater';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { ChatCommands } from '../../redis/chat/commands.js';
import type { MailboxPoller, Ring } from '../mailbox/poller.js';
import { MessageStream } from '../mailbox/stream.js';
import { parseChatId, type ChatService, type Message } from './chats.js';
import type { Notification, NotificationService } from './notifications.js';

/** Items per read; a mailbox with more waiting is read again after its other mailboxes' turn. */
export const FEED_BATCH = 100;
/** Whether messageAdded marks what it delivered read when the subscriber does not say. */
export const MARK_READ_DEFAULT = false;
/** After a failed read (Redis away), a stream waits this long and reads again. */
const RETRY_MS = 1000;

export interface FeedDeps {
  commands: ChatCommands;
  chats: ChatService;
  notifications: NotificationService;
  poller: MailboxPoller;
  log: Logger;
}

export class FeedService {
  /** A ring is shared by every stream of its chat in this process: its message is parsed once. */
  private readonly parsed = new WeakMap<Ring, Message>();
  private readonly commands: ChatCommands;
  private readonly chats: ChatService;
  private readonly notifications: NotificationService;
  private readonly poller: MailboxPoller;
  private readonly log: Logger;

  constructor(deps: FeedDeps) {
    ({
      commands: this.commands,
      chats: this.chats,
      notifications: this.notifications,
      poller: this.poller,
      log: this.log,
    } = deps);
  }

  /**
   * Messages of one chat (`chatId`, of which the viewer must be a member), or of all the viewer's chats (none),
   * above the viewer's read position and then as they arrive. With `markRead`, each batch is marked read once
   * delivered (once confirmed, with `confirmReceipt`). A one-chat stream ends with FORBIDDEN when the viewer stops
   * being a member; an all-chats stream follows the viewer's joins and leaves.
   */
  async messageAdded(
    viewer: string,
    input: { chatId?: string | null; markRead: boolean },
    confirmReceipt?: () => Promise<void>,
  ): Promise<Repeater<Message | AppError>> {
    const chatId = input.chatId == null ? null : parseChatId({ chatId: input.chatId });
    if (chatId !== null) await this.chats.requireMember(viewer, { chatId });
    return MessageStream.open<Message>(this.poller, {
      mailbox: (id) => ({
        head: this.commands.chatHead({ chatId: id }),
        read: async (cursor, first) => {
          const read = await this.chats.read(viewer, { chatId: id, after: cursor, first });
          return { version: read.version, position: read.readUpTo, items: read.messages, more: read.more };
        },
        fromRing: (ring) => this.ringMessage(id, ring),
      }),
      follow:
        chatId !== null
          ? [chatId]
          : {
              head: this.commands.indexHead({ user: viewer }),
              keys: () => this.commands.indexedChats({ user: viewer }),
            },
      delivered: input.markRead
        ? (id, upTo) => (this.chats.markDelivered(viewer, { chatId: id, upTo }), true)
        : undefined,
      confirmReceipt,
      lost: (id, err) =>
        AppError.is(err) && (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND')
          ? new AppError('FORBIDDEN', `you are no longer a member of chat ${id}`)
          : undefined,
      fellBehind: (id, { from, to }) =>
        new AppError(
          'BUSY',
          `this subscription fell behind: messages ${from} to ${to} of chat ${id} were deleted (read on every ` +
            'device, or past the backlog) before it sent them; subscribe again to go on from your read position',
        ),
      batch: FEED_BATCH,
      retryMs: RETRY_MS,
      log: () => this.log.child({ viewer }),
    });
  }

  /** The viewer's unacknowledged notifications, oldest first, then new ones as they arrive. */
  notificationAdded(viewer: string): Repeater<Notification | AppError> {
    return MessageStream.open<Notification>(this.poller, {
      mailbox: () => ({
        head: this.commands.inboxHead({ user: viewer }),
        read: async (cursor, first) => {
          const items = await this.notifications.list(viewer, { after: cursor ?? 0, first });
          return { version: null, position: 0, items, more: items.length === first };
        },
      }),
      follow: [viewer],
      batch: FEED_BATCH,
      retryMs: RETRY_MS,
      log: () => this.log.child({ viewer }),
    });
  }

  private ringMessage(chatId: string, ring: Ring): Message {
    let message = this.parsed.get(ring);
    if (!message) this.parsed.set(ring, (message = this.commands.ringMessage({ chatId, data: ring.data! })));
    return message;
  }
}
