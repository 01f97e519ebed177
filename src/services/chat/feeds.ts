/**
 * Live feeds behind the subscriptions: streams that first deliver what waits in a mailbox above the reader's
 * position, then what arrives, woken by the process's MailboxPoller. Each stream reads from its own cursor, so
 * it delivers per chat in id order and never the same message twice; a stream that reconnects starts again
 * from the read position kept in Redis, so nothing unread is lost. Messages small enough ride on the doorbell;
 * a stream delivers them without reading Redis only when their versions continue exactly from its last read
 * (so no join, leave or removal can have happened in between); anything else makes it read.
 *
 * Streams are Repeaters: the consumer (graphql-ws, SSE) pulls, and `await push()` resolves only when it has
 * taken the value, so a stream never reads ahead of a slow socket. When the consumer stops, the stream stops
 * at once (even while waiting for a wake-up) and unwatches its keys.
 */
import { Repeater } from '@repeaterjs/repeater';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import { parseMessage, type ChatRead, type ChatService, type Message } from './chats.js';
import type { MailboxPoller, Ring } from '../mailbox/poller.js';
import type { Notification, NotificationService } from './notifications.js';

/** Messages fetched per read; a stream with more waiting reads again after its other chats' turn. */
export const FEED_BATCH = 100;
/** After a failed read (Redis away), a stream waits this long and reads again. */
const RETRY_MS = 1000;

/**
 * A stream's stop, raced against what the stream waits for. Racing the Repeater's stop promise directly would
 * leave one reaction on it per wait for the stream's whole life; these races remove theirs when they settle.
 */
class Stop {
  stopped = false;
  private readonly listeners = new Set<() => void>();

  constructor(stop: Promise<unknown>) {
    void stop.then(() => {
      this.stopped = true;
      for (const listener of this.listeners) listener();
      this.listeners.clear();
    });
  }

  /** Calls `listener` once when the stream stops. */
  onStop(listener: () => void): void {
    if (this.stopped) listener();
    else this.listeners.add(listener);
  }

  /** Settles as `promise` does, or with undefined as soon as the stream stops. */
  race<T>(promise: Promise<T>): Promise<T | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      const onStop = () => resolve(undefined);
      this.listeners.add(onStop);
      promise.then(
        (value) => {
          this.listeners.delete(onStop);
          resolve(value);
        },
        (err: unknown) => {
          this.listeners.delete(onStop);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  delay(ms: number): Promise<void> {
    return this.race(new Promise<void>((r) => setTimeout(r, ms).unref())).then(() => undefined);
  }
}

/**
 * Marks of what changed, and a promise that resolves when something does (or the stream stops). It runs once per
 * delivery to every subscriber, so it allocates nothing but the promise it waits on: two sets take turns.
 */
class Wakeup<T> {
  private marks = new Set<T>();
  /** The set `take` returned last; its caller has finished with it by the next `take`. */
  private taken = new Set<T>();
  private resolve: (() => void) | undefined;

  constructor(private readonly stop: Stop) {
    stop.onStop(() => this.wake());
  }

  mark(item: T): void {
    this.marks.add(item);
    this.wake();
  }

  /** Waits until something is marked (or the stream stops), then takes the marks, to be read before the next take. */
  async take(): Promise<ReadonlySet<T>> {
    if (this.marks.size === 0 && !this.stop.stopped) await new Promise<void>((r) => (this.resolve = r));
    const marks = this.marks;
    this.marks = this.taken;
    this.marks.clear();
    this.taken = marks;
    return marks;
  }

  private wake(): void {
    this.resolve?.();
    this.resolve = undefined;
  }
}

/** The user's chat index changed (an all-chats stream re-reads it). */
const INDEX = Symbol('index');

/** A chat a message stream follows. */
interface Followed {
  /** The last message id delivered (null before the first read: start at the read position). */
  cursor: number | null;
  /** The chat's version as of the last read that delivered everything (null: unknown, read next time). */
  version: number | null;
  /** Messages announced by the doorbell since, with the version each produced. */
  hints: { version: number; message: Message }[];
  /** A move happened that no doorbell described: read. */
  stale: boolean;
  unwatch: () => void;
}

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
   * Messages of one chat (`chatId`), or of all the viewer's chats (null), above the viewer's read position and
   * then as they arrive. With `markRead`, each batch is marked read once the consumer has taken it. A stream of
   * one chat ends with a FORBIDDEN item when the viewer stops being a member; an all-chats stream follows the
   * viewer's joins and leaves. Check membership before calling (the stream assumes a start as a member).
   * `confirmReceipt`, when the transport has one, tells when the client has received what was sent; `markRead`
   * then marks only what the client confirmed (without it, what was handed to the transport).
   */
  messages(
    viewer: string,
    chatId: string | null,
    markRead: boolean,
    confirmReceipt?: () => Promise<void>,
  ): Repeater<Message | AppError> {
    return new Repeater<Message | AppError>(async (push, stopRepeater) => {
      const stop = new Stop(stopRepeater);
      const wakeup = new Wakeup<string | typeof INDEX>(stop);
      const followed = new Map<string, Followed>();
      let unwatchIndex: (() => void) | undefined;

      const follow = (id: string) => {
        if (followed.has(id)) return;
        const head = this.chats.head(id);
        const unwatch = this.poller.watch(head.key, head.channel, (ring) => {
          const state = followed.get(id);
          if (!state) return;
          if (ring?.data === undefined) state.stale = true; // a move the doorbell did not describe: read
          else state.hints.push({ version: Number(ring.value), message: this.ringMessage(id, ring, ring.data) });
          wakeup.mark(id);
        });
        followed.set(id, { cursor: null, version: null, hints: [], stale: true, unwatch });
        wakeup.mark(id);
      };
      const unfollow = (id: string) => {
        followed.get(id)?.unwatch();
        followed.delete(id);
      };

      /** The viewer is no longer a member: an all-chats stream keeps watching, a one-chat stream ends. */
      const lost = async (id: string): Promise<boolean> => {
        // All chats: the index may list a chat the viewer is still joining (the index is written first) or
        // has just left; keep watching it until the index drops it, so a join completing wakes this stream.
        if (chatId === null) {
          const state = followed.get(id);
          if (state) state.version = null; // no doorbell shortcut until a read succeeds again
          return true;
        }
        unfollow(id);
        await push(new AppError('FORBIDDEN', `you are no longer a member of chat ${id}`));
        return false;
      };
      const isMembershipError = (err: unknown) => AppError.is(err) && (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND');

      /**
       * After delivering up to `delivered`: marks it read when asked to (without, it returns at once, with no
       * promise). Returns false when the stream must end.
       */
      const markDelivered = (id: string, delivered: number): boolean | Promise<boolean> =>
        !markRead || delivered === 0 ? true : markReadUpTo(id, delivered);
      const markReadUpTo = async (id: string, delivered: number): Promise<boolean> => {
        if (confirmReceipt) await stop.race(confirmReceipt());
        if (stop.stopped) return false;
        try {
          await this.chats.markRead(id, viewer, delivered);
        } catch (err) {
          if (isMembershipError(err)) return lost(id);
          throw err;
        }
        return true;
      };

      /**
       * Delivers what waits in a chat above the stream's cursor. Fast path: messages the doorbell carried, when
       * their versions continue exactly from the stream's last read (so nothing else, such as a removal, happened
       * in between). Otherwise one batch read from Redis; with more waiting, the chat is marked again (so one
       * busy chat does not hold up the others). Returns false when the stream must end.
       */
      const drain = async (id: string): Promise<boolean> => {
        const state = followed.get(id);
        if (!state) return true;
        if (!state.stale && state.version !== null && state.cursor !== null) {
          // Rings arrive in the order of their versions: drop those the last read already covered.
          while (state.hints.length > 0 && state.hints[0]!.version <= state.version) state.hints.shift();
          let delivered = 0;
          for (let hint = state.hints[0]; hint?.version === state.version + 1 && hint.message.id === state.cursor + 1; hint = state.hints[0]) {
            state.hints.shift();
            await push(hint.message);
            if (!followed.has(id) || stop.stopped) return !stop.stopped;
            state.version = hint.version;
            state.cursor = hint.message.id;
            delivered = hint.message.id;
          }
          if (state.hints.length === 0) return markDelivered(id, delivered);
          if (!(await markDelivered(id, delivered))) return false;
        }
        state.stale = false; // a ring during the read sets it again
        let batch: ChatRead;
        try {
          batch = await this.chats.read(id, viewer, state.cursor, FEED_BATCH);
        } catch (err) {
          if (isMembershipError(err)) return lost(id);
          throw err;
        }
        // The first read starts at the read position; later ones go on from what this stream delivered (another
        // device marking more read does not hide new messages from this one).
        state.cursor ??= batch.readUpTo;
        state.version = batch.more ? null : batch.version;
        state.hints = state.hints.filter((h) => state.version !== null && h.version > state.version);
        let delivered = 0;
        for (const message of batch.messages) {
          if (message.id <= state.cursor) continue;
          await push(message);
          if (!followed.has(id) || stop.stopped) return !stop.stopped;
          state.cursor = message.id;
          delivered = message.id;
        }
        if (batch.more || state.hints.length > 0) wakeup.mark(id);
        return markDelivered(id, delivered);
      };

      if (chatId !== null) follow(chatId);
      else {
        const head = this.chats.indexHead(viewer);
        unwatchIndex = this.poller.watch(head.key, head.channel, () => wakeup.mark(INDEX));
        wakeup.mark(INDEX);
      }

      try {
        while (!stop.stopped) {
          const marks = await wakeup.take();
          try {
            if (marks.has(INDEX)) {
              const ids = new Set(await this.chats.chatIdsOf(viewer));
              for (const id of ids) follow(id);
              for (const id of followed.keys()) if (!ids.has(id)) unfollow(id);
            }
            for (const id of marks) {
              if (stop.stopped) break;
              if (id !== INDEX && !(await drain(id))) {
                stopRepeater();
                break;
              }
            }
          } catch (err) {
            // Redis unreachable or failing: keep the stream, read everything again once it answers.
            this.log.warn({ err: err instanceof Error ? err.message : String(err), viewer }, 'message feed read failed; retrying');
            for (const id of marks) wakeup.mark(id);
            await stop.delay(RETRY_MS);
          }
        }
      } finally {
        unwatchIndex?.();
        for (const id of [...followed.keys()]) unfollow(id);
      }
    });
  }

  private ringMessage(chatId: string, ring: Ring, data: string): Message {
    let message = this.parsed.get(ring);
    if (!message) this.parsed.set(ring, (message = parseMessage(chatId, data)));
    return message;
  }

  /** The viewer's unacknowledged notifications, oldest first, then new ones as they arrive. */
  notificationStream(viewer: string): Repeater<Notification> {
    return new Repeater<Notification>(async (push, stopRepeater) => {
      const stop = new Stop(stopRepeater);
      const wakeup = new Wakeup<true>(stop);
      const head = this.notifications.head(viewer);
      const unwatch = this.poller.watch(head.key, head.channel, () => wakeup.mark(true));
      let cursor = 0;
      wakeup.mark(true);
      try {
        while (!stop.stopped) {
          await wakeup.take();
          try {
            for (;;) {
              const batch = await this.notifications.list(viewer, cursor, FEED_BATCH);
              for (const n of batch) {
                await push(n);
                if (stop.stopped) return;
                cursor = n.id;
              }
              if (batch.length < FEED_BATCH) break;
            }
          } catch (err) {
            this.log.warn({ err: err instanceof Error ? err.message : String(err), viewer }, 'notification feed read failed; retrying');
            wakeup.mark(true);
            await stop.delay(RETRY_MS);
          }
        }
      } finally {
        unwatch();
      }
    });
  }
}
