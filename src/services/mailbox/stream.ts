/**
 * MessageStream: a live stream over pull mailboxes, the first delivery from the reader's position, then what
 * arrives, per mailbox in id order and never twice; items riding on the doorbell are delivered without a read when
 * their versions follow exactly. A Repeater: the consumer pulls, so it never reads ahead of a slow socket. Chat and
 * notification feeds are built on it; the protocol: docs/subscriptions.md.
 */
import { Repeater, type Push } from '@repeaterjs/repeater';
import type { Logger } from 'pino';
import type { AppError } from '../../errors.js';
import { Stop } from '../shared/stop.js';
import type { Head, MailboxPoller, Ring } from './poller.js';

/** What a stream reads of one mailbox. */
export interface MailboxRead<T> {
  /** The mailbox's version when read, for the doorbell's shortcut; null: no shortcut. */
  version: number | null;
  /** The reader's position (where a first read starts). */
  position: number;
  items: T[];
  /** The read returned a full batch: there may be more. */
  more: boolean;
}

/** One mailbox a stream follows. */
export interface Mailbox<T> {
  /** The head key that moves with the mailbox, and its doorbell. */
  head: Head;
  /** Up to `first` items after `cursor` (null: after the reader's position). */
  read(cursor: number | null, first: number): Promise<MailboxRead<T>>;
  /** The item a doorbell ring carried (called only for a ring with data). */
  fromRing?(ring: Ring): T;
}

export interface StreamOptions<T> {
  /** The mailbox behind `key`. */
  mailbox(key: string): Mailbox<T>;
  /** Either the keys to follow, or an index of them that the stream re-reads whenever its head moves. */
  follow: string[] | { head: Head; keys(): Promise<string[]> };
  /** Called after items up to `id` of `key` were delivered (a read position to move); false ends the stream. */
  delivered?(key: string, id: number): Promise<boolean> | boolean;
  /**
   * Resolves once the client has received everything sent so far (over WebSocket); `delivered` then waits for it,
   * so it counts only what the client confirmed. Without it, what was handed to the transport counts.
   */
  confirmReceipt?: () => Promise<void>;
  /**
   * When an error of a read (or of `delivered`) means the reader may no longer read `key`: the item that says so. A
   * stream with an index keeps watching the key until the index drops it; one with fixed keys pushes it and ends.
   */
  lost?(key: string, err: unknown): AppError | undefined;
  /**
   * For mailboxes whose ids run without holes (a chat's messages): the item that ends the stream when a read finds
   * that items after what it delivered are gone (deleted meanwhile, as read on every device or past the backlog,
   * while the stream waited for its client). Without it, the stream goes on from the next item there is.
   */
  fellBehind?(key: string, missed: { from: number; to: number }): AppError;
  /** Items per read; a mailbox with more waiting is read again after the others' turn. */
  batch: number;
  /** After a failed read (Redis away), the stream waits this long and reads again. */
  retryMs: number;
  /** The stream's logger, made each time it logs (a failed read): a child logger kept per stream cost its heap. */
  log: () => Logger;
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

  constructor(private readonly stop: Stop) {}

  mark(item: T): void {
    this.marks.add(item);
    this.wake();
  }

  /**
   * Resolves once something is marked (or the stream stops); undefined when something already is. Not an async
   * function: an idle stream waits on this one promise, without an async frame of its own held for its whole life.
   */
  wait(): Promise<void> | undefined {
    if (this.marks.size > 0 || this.stop.stopped) return undefined;
    return new Promise<void>((r) => (this.resolve = r));
  }

  /** Takes the marks, to be read before the next take. */
  take(): ReadonlySet<T> {
    const marks = this.marks;
    this.marks = this.taken;
    this.marks.clear();
    this.taken = marks;
    return marks;
  }

  /** Resolves the wait (the stream stopped, or something was marked). */
  wake(): void {
    this.resolve?.();
    this.resolve = undefined;
  }
}

/** The index of followed mailboxes changed: re-read it. */
const INDEX = Symbol('index');

/** A mailbox the stream follows. */
interface Followed<T> {
  mailbox: Mailbox<T>;
  /** The last item id delivered (null before the first read: start at the reader's position). */
  cursor: number | null;
  /** The version as of the last read that delivered everything (null: unknown, read next time). */
  version: number | null;
  /** Items announced by the doorbell since, with the version each produced: at most `batch` (then `stale`). */
  hints: { version: number; item: T }[];
  /** A move happened that no doorbell described: read. */
  stale: boolean;
  unwatch: () => void;
}

export class MessageStream<T extends { id: number }> {
  private readonly followed = new Map<string, Followed<T>>();
  private readonly stop: Stop;
  private readonly wakeup: Wakeup<string | typeof INDEX>;
  private readonly withIndex: boolean;

  private constructor(
    private readonly poller: MailboxPoller,
    private readonly o: StreamOptions<T>,
    private readonly push: Push<T | AppError>,
    private readonly end: () => void,
    stop: Promise<unknown>,
  ) {
    this.stop = new Stop(stop, () => this.wakeup.wake());
    this.wakeup = new Wakeup(this.stop);
    this.withIndex = !Array.isArray(o.follow);
  }

  /** A stream over the mailboxes of `options`, as a Repeater for graphql-ws and SSE to pull. */
  static open<T extends { id: number }>(poller: MailboxPoller, options: StreamOptions<T>): Repeater<T | AppError> {
    return new Repeater<T | AppError>((push, stop) =>
      new MessageStream(poller, options, push, () => stop(), stop).run(),
    );
  }

  private async run(): Promise<void> {
    const { follow } = this.o;
    let unwatchIndex: (() => void) | undefined;
    if (Array.isArray(follow)) for (const key of follow) this.follow(key);
    else {
      unwatchIndex = this.poller.watch(follow.head, () => this.wakeup.mark(INDEX));
      this.wakeup.mark(INDEX);
    }
    try {
      while (!this.stop.stopped) {
        await this.wakeup.wait();
        const marks = this.wakeup.take();
        try {
          if (marks.has(INDEX) && !Array.isArray(follow)) {
            const keys = new Set(await follow.keys());
            for (const key of keys) this.follow(key);
            for (const key of this.followed.keys()) if (!keys.has(key)) this.unfollow(key);
          }
          for (const key of marks) {
            if (this.stop.stopped) break;
            if (key !== INDEX && !(await this.drain(key))) {
              this.end();
              break;
            }
          }
        } catch (err) {
          // Redis unreachable or failing: keep the stream, read everything again once it answers.
          this.o.log().warn({ err }, 'feed read failed; retrying');
          for (const key of marks) this.wakeup.mark(key);
          await this.stop.delay(this.o.retryMs);
        }
      }
    } finally {
      unwatchIndex?.();
      for (const key of [...this.followed.keys()]) this.unfollow(key);
    }
  }

  private follow(key: string): void {
    if (this.followed.has(key)) return;
    const mailbox = this.o.mailbox(key);
    const unwatch = this.poller.watch(mailbox.head, (ring) => {
      const state = this.followed.get(key);
      if (!state) return;
      // A move the doorbell did not describe: read. Nor are more than a read's worth of rings kept while the
      // stream waits for its client (one that stopped reading would hold every message sent meanwhile): the
      // next read takes them from the mailbox instead.
      if (ring?.data === undefined || !mailbox.fromRing) state.stale = true;
      else if (state.hints.length >= this.o.batch) {
        state.hints = [];
        state.stale = true;
      } else state.hints.push({ version: Number(ring.value), item: mailbox.fromRing(ring) });
      this.wakeup.mark(key);
    });
    this.followed.set(key, { mailbox, cursor: null, version: null, hints: [], stale: true, unwatch });
    this.wakeup.mark(key);
  }

  private unfollow(key: string): void {
    this.followed.get(key)?.unwatch();
    this.followed.delete(key);
  }

  /** The reader may no longer read `key`: a stream with an index keeps watching it, one without ends. */
  private async lose(key: string, loss: AppError): Promise<boolean> {
    if (this.withIndex) {
      // The index may list a mailbox the reader is still joining (the index is written first) or has just left;
      // watch it until the index drops it, so a join completing wakes this stream.
      const state = this.followed.get(key);
      if (state) state.version = null; // no doorbell shortcut until a read succeeds again
      return true;
    }
    this.unfollow(key);
    await this.push(loss);
    return false;
  }

  /** After delivering up to `delivered` (0: nothing); false when the stream must end. No promise when nothing is to do. */
  private afterDelivery(key: string, delivered: number): boolean | Promise<boolean> {
    if (delivered === 0 || !this.o.delivered) return true;
    return this.deliveredRemotely(key, delivered);
  }

  private async deliveredRemotely(key: string, delivered: number): Promise<boolean> {
    if (this.o.confirmReceipt) await this.stop.race(this.o.confirmReceipt());
    if (this.stop.stopped) return false;
    try {
      return await this.o.delivered!(key, delivered);
    } catch (err) {
      const loss = this.o.lost?.(key, err);
      if (loss) return this.lose(key, loss);
      throw err;
    }
  }

  /**
   * Delivers what waits in `key` above the stream's cursor. Fast path: items the doorbell carried, when their
   * versions continue exactly from the last read (so nothing else happened in between). Otherwise one batch read;
   * with more waiting, the key is marked again (so one busy mailbox does not hold up the others). Returns false
   * when the stream must end.
   */
  private async drain(key: string): Promise<boolean> {
    const state = this.followed.get(key);
    if (!state) return true;
    if (!state.stale && state.version !== null && state.cursor !== null) {
      // Rings arrive in the order of their versions: drop those the last read already covered.
      while (state.hints.length > 0 && state.hints[0]!.version <= state.version) state.hints.shift();
      let delivered = 0;
      for (
        let hint = state.hints[0];
        hint?.version === state.version + 1 && hint.item.id === state.cursor + 1;
        hint = state.hints[0]
      ) {
        state.hints.shift();
        await this.push(hint.item);
        if (!this.followed.has(key) || this.stop.stopped) return !this.stop.stopped;
        state.version = hint.version;
        state.cursor = hint.item.id;
        delivered = hint.item.id;
      }
      if (state.hints.length === 0) return this.afterDelivery(key, delivered);
      if (!(await this.afterDelivery(key, delivered))) return false;
    }
    state.stale = false; // a ring during the read sets it again
    let batch: MailboxRead<T>;
    try {
      batch = await state.mailbox.read(state.cursor, this.o.batch);
    } catch (err) {
      const loss = this.o.lost?.(key, err);
      if (loss) return this.lose(key, loss);
      throw err;
    }
    // The first read starts at the reader's position; later ones go on from what this stream delivered (another
    // device moving the position does not hide new items from this one), unless what follows it is gone.
    const sent = state.cursor;
    const next = sent === null ? undefined : batch.items.find((item) => item.id > sent);
    if (sent !== null && next && next.id > sent + 1 && this.o.fellBehind) {
      await this.push(this.o.fellBehind(key, { from: sent + 1, to: next.id - 1 }));
      return false;
    }
    state.cursor ??= batch.position;
    state.version = batch.more ? null : batch.version;
    state.hints = state.hints.filter((h) => state.version !== null && h.version > state.version);
    let delivered = 0;
    for (const item of batch.items) {
      if (item.id <= state.cursor) continue;
      await this.push(item);
      if (!this.followed.has(key) || this.stop.stopped) return !this.stop.stopped;
      state.cursor = item.id;
      delivered = item.id;
    }
    if (batch.more || state.hints.length > 0) this.wakeup.mark(key);
    return this.afterDelivery(key, delivered);
  }
}
