/**
 * The live feeds behind `messageAdded` and `notificationAdded`: MessageStreams over a viewer's chats (one chat, or
 * all of them through the viewer's chat index) and over their notification mailbox. A stream reconnecting starts
 * again from the read position kept in Redis, so nothing unread is lost.
 */
import type { Repeater } from '@repeaterjs/repeater';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { MailboxPoller, Ring } from '../mailbox/poller.js';
import { MessageStream } from '../mailbox/stream.js';
import { parseMessage, type ChatService, type Message } from './chats.js';
import type { Notification, NotificationService } from './notifications.js';

/** Items per read; a mailbox with more waiting is read again after its other mailboxes' turn. */
export const FEED_BATCH = 100;
/** After a failed read (Redis away), a stream waits this long and reads again. */
const RETRY_MS = 1000;

export class FeedService {
  /** A ring is shared by every stream of its chat in this process: its message is parsed once. */
  private readonly parsed = new WeakMap<Ring, Message>();

  constructor(
    private readonly chats: ChatService,
    private readonly notifications: NotificationService,
    private readonly poller: MailboxPoller,
    private readonly log: Logger,
  ) {}

  /**
   * Messages of one chat (`chatId`), or of all the viewer's chats (null), above the viewer's read position and then
   * as they arrive. With `markRead`, each batch is marked read once delivered (once confirmed, with
   * `confirmReceipt`). A one-chat stream ends with FORBIDDEN when the viewer stops being a member; an all-chats
   * stream follows the viewer's joins and leaves. Check membership before calling.
   */
  messageAdded(
    viewer: string,
    chatId: string | null,
    markRead: boolean,
    confirmReceipt?: () => Promise<void>,
  ): Repeater<Message | AppError> {
    return MessageStream.open<Message>(this.poller, {
      mailbox: (id) => ({
        head: this.chats.head(id),
        read: async (cursor, first) => {
          const read = await this.chats.read(id, viewer, cursor, first);
          return { version: read.version, position: read.readUpTo, items: read.messages, more: read.more };
        },
        fromRing: (ring) => this.ringMessage(id, ring),
      }),
      follow:
        chatId !== null ? [chatId] : { head: this.chats.indexHead(viewer), keys: () => this.chats.chatIdsOf(viewer) },
      delivered: markRead ? async (id, upTo) => (await this.chats.markRead(id, viewer, upTo), true) : undefined,
      confirmReceipt,
      lost: (id, err) =>
        AppError.is(err) && (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND')
          ? new AppError('FORBIDDEN', `you are no longer a member of chat ${id}`)
          : undefined,
      batch: FEED_BATCH,
      retryMs: RETRY_MS,
      log: this.log.child({ viewer }),
    });
  }

  /** The viewer's unacknowledged notifications, oldest first, then new ones as they arrive. */
  notificationAdded(viewer: string): Repeater<Notification | AppError> {
    return MessageStream.open<Notification>(this.poller, {
      mailbox: () => ({
        head: this.notifications.head(viewer),
        read: async (cursor, first) => {
          const items = await this.notifications.list(viewer, cursor ?? 0, first);
          return { version: null, position: 0, items, more: items.length === first };
        },
      }),
      follow: [viewer],
      batch: FEED_BATCH,
      retryMs: RETRY_MS,
      log: this.log.child({ viewer }),
    });
  }

  private ringMessage(chatId: string, ring: Ring): Message {
    let message = this.parsed.get(ring);
    if (!message) this.parsed.set(ring, (message = parseMessage(chatId, ring.data!)));
    return message;
  }
}
