/**
 * Waiting for a lock held elsewhere, as the plain lock of locks.ts and the reentrant lock of reentrant.ts (with the
 * documents' editing leases built on it) do: one watch per lock on the mailbox poller (its head key and doorbell),
 * the waiters of this process in a queue that a ring wakes one by one, and the end of the holder's lease as the
 * backstop. Details: docs/coordination.md.
 */
import { randomUUID } from 'node:crypto';
import type { Head, MailboxPoller } from '../mailbox/poller.js';
import { checkMs, checkName } from '../shared/arguments.js';

/** A watch on a lock nobody here waits for is kept this long, so a burst of contention does not re-subscribe. */
export const WATCH_LINGER_MS = 1000;
/** Added to a wait for a lease to run out, so that waiters do not all retry at the same instant. */
export const EXPIRY_JITTER_MS = 10;

/** An acquire's checks and start: the token it takes the lock with, and when its wait ends. */
export function beginAcquire({ name, leaseMs, waitMs }: { name: string; leaseMs: number; waitMs: number }): {
  token: string;
  deadline: number;
} {
  checkName('lock', name);
  checkMs('leaseMs', leaseMs, 1);
  checkMs('waitMs', waitMs, 0);
  return { token: randomUUID(), deadline: performance.now() + waitMs };
}

/** A waiter of this process; `handed` is what a holder that hands the lock over passes (the plain lock's lease). */
export interface Waiter<H> {
  /** With `handed`: handed over. Without: try again. */
  wake: (handed?: H) => void;
}

/** The waiters of one lock in this process. */
export interface Waiting<W> {
  /** First come first served; a ring wakes the first. */
  queue: W[];
  /** Hand-overs since the last release (the plain lock's). */
  handoffs: number;
  /** A release let the lock go while waiters here waited, and none of them has taken it since (the plain lock's). */
  yielding: boolean;
  /**
   * The lease of this process that holds the lock, as far as it knows, and the earliest its lease can end
   * (performance.now()); a waiter here then queues for its hand-over without asking Redis (the plain lock's).
   */
  held: { token: string; endsAt: number } | undefined;
  /** How many times the watch fired: a waiter that saw it move while it was trying does not wait. */
  rings: number;
  unwatch: () => void;
  linger: NodeJS.Timeout | undefined;
}

/** What a waiter waits for: the lock, the watch's rings it saw before its failed attempt, and the most it waits. */
export interface Wait {
  name: string;
  rings: number | undefined;
  ms: number;
}

/**
 * The waiters of one kind of lock in this process, by lock name: each lock with waiters here is watched once on the
 * mailbox poller (its head key and doorbell, from `head`), and a ring wakes its first waiter, or with `wakeAll` every
 * waiter (the read-write lock's: readers can go in together).
 */
export class LockWaits<W extends Waiter<H>, H = never> {
  private readonly waiting = new Map<string, Waiting<W>>();
  private readonly poller: MailboxPoller;
  private readonly head: (name: string) => Head;
  private readonly wakeAll: boolean;

  constructor(deps: { poller: MailboxPoller; head: (name: string) => Head; wakeAll?: boolean }) {
    ({ poller: this.poller, head: this.head } = deps);
    this.wakeAll = deps.wakeAll ?? false;
  }

  /** The waiters of lock `name` here, while it is watched. */
  get(name: string): Waiting<W> | undefined {
    return this.waiting.get(name);
  }

  /**
   * Waits up to `ms` for a ring of the lock's watch, or for the holder to hand the lock over (then resolves with
   * what it handed). `rings` is what the waiter saw before its failed attempt: if the watch fired since, the lock
   * moved while it was trying and it goes again at once.
   */
  wait({ name, rings, ms }: Wait, waiter: Omit<W, 'wake'>): Promise<H | undefined> {
    const entry = this.waiting.get(name) ?? this.watch(name);
    if (rings !== undefined && entry.rings !== rings) return Promise.resolve(undefined);
    clearTimeout(entry.linger);
    return new Promise((resolve) => {
      const queued = {
        ...waiter,
        wake: (handed?: H) => {
          clearTimeout(timer);
          this.idle(name, entry);
          resolve(handed);
        },
      } as W;
      const timer = setTimeout(() => {
        const at = entry.queue.indexOf(queued);
        // Off the queue already: a holder is handing the lock over to it, and the hand-over's wake settles the wait.
        if (at < 0) return;
        entry.queue.splice(at, 1);
        this.idle(name, entry);
        resolve(undefined);
      }, ms);
      entry.queue.push(queued);
    });
  }

  /** Watches the lock's head; its first read also fires, covering a release just before the watch. */
  private watch(name: string): Waiting<W> {
    const entry: Waiting<W> = {
      queue: [],
      handoffs: 0,
      yielding: false,
      held: undefined,
      rings: 0,
      unwatch: () => undefined,
      linger: undefined,
    };
    entry.unwatch = this.poller.watch(this.head(name), () => {
      entry.rings++;
      if (this.wakeAll) for (const waiter of entry.queue.splice(0)) waiter.wake();
      else entry.queue.shift()?.wake();
    });
    this.waiting.set(name, entry);
    return entry;
  }

  private idle(name: string, entry: Waiting<W>): void {
    if (entry.queue.length > 0) return;
    clearTimeout(entry.linger);
    entry.linger = setTimeout(() => {
      if (entry.queue.length > 0 || this.waiting.get(name) !== entry) return;
      entry.unwatch();
      this.waiting.delete(name);
    }, WATCH_LINGER_MS);
    entry.linger.unref();
  }
}
