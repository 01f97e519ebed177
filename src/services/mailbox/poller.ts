/**
 * One poller per process for every live subscription here: it watches head keys (counters that move with their
 * mailbox) and wakes their listeners when one moves. Reads follow the doorbells (sharded pub/sub), so idle costs
 * nearly nothing: a head is read when a ring names it without its value, when it is first watched, when the doorbell
 * connection comes back (rings may have been lost meanwhile), and otherwise only by the audit, which reads every
 * watched head once per `auditMs`, a slice each step, so it never bursts. A lost ring costs at most one audit period
 * of latency, never an item. The protocol: docs/subscriptions.md.
 */
import type { Logger } from 'pino';
import type { Head, MailboxCommands } from '../../redis/mailbox/commands.js';

export type { Head };

/** What a doorbell said about a move: the new head, and what the mailbox's script attached (a message). */
export interface Ring {
  value: string;
  data?: string;
}

/** Called with the ring when a doorbell announced the move; without, when a read found it. */
type Listener = (ring?: Ring) => void;

interface Watched {
  channel: string;
  /** The hash field the head is, when it is one (Head). */
  field: string | undefined;
  /** The head as last read or rung; undefined until the first read. */
  head: string | null | undefined;
  listeners: Set<Listener>;
}

export interface PollerOptions {
  /** POLL_AUDIT_MS: every watched head is read at least this often, whatever the doorbells say. */
  auditMs: number;
}

export interface PollerDeps {
  commands: MailboxCommands;
  options: PollerOptions;
  log: Logger;
}

/** The audit reads a slice of the watched heads this often (or every `auditMs`, when shorter). */
const AUDIT_STEP_MS = 1000;
/**
 * After the doorbell connection comes back, the heads are read at once and again this much later: the connection's
 * subscriptions are renewed as it comes back, and a ring sent just before they take effect is caught by the second read.
 */
const RESYNC_AGAIN_MS = 1000;

export class MailboxPoller {
  private readonly watched = new Map<string, Watched>();
  private readonly channels = new Map<string, number>();
  /** Handlers of channels listened to as such (`listen`), by channel. */
  private readonly handlers = new Map<string, Set<(message: string) => void>>();
  /** What listeners (`listen`) do when their messages may have been lost. */
  private readonly missed = new Set<() => void>();
  private readonly rung = new Set<string>();
  /** Where the audit goes on: a live iterator over the watched keys (it skips deleted ones, visits added ones). */
  private sweep: Iterator<string> | undefined;
  /** Reads the audit owes: each step adds its share (a fraction when few heads are watched), whole ones are read. */
  private owed = 0;
  /** Moves a read found that no ring had announced, by key: their rings are counted lost unless they come late. */
  private unannounced = new Map<string, string | null>();
  private lostRings = 0;
  private timer: NodeJS.Timeout | undefined;
  private ringScheduled = false;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private lastError = '';
  /** Counts the doorbell connection's closes: rings sent while it was down are lost. */
  private doorbellConnection = 0;
  /** Resyncs whose second read is still to come, and whether the connection has come up once (a first resync). */
  private resyncing = 0;
  private resynced = false;

  private readonly commands: MailboxCommands;
  private readonly options: PollerOptions;
  private readonly log: Logger;

  constructor(deps: PollerDeps) {
    ({ commands: this.commands, options: this.options, log: this.log } = deps);
    const { doorbells } = this.commands;
    doorbells.onClose(() => this.doorbellConnection++);
    doorbells.onReconnect(() => this.resync());
    doorbells.onMessage((channel, message) => {
      for (const handler of this.handlers.get(channel) ?? []) handler(message);
      // "<key>", "<key> <value>" or "<key> <value> <data>" (data may hold spaces)
      const first = message.indexOf(' ');
      const key = first < 0 ? message : message.slice(0, first);
      const second = first < 0 ? -1 : message.indexOf(' ', first + 1);
      const value = first < 0 ? undefined : second < 0 ? message.slice(first + 1) : message.slice(first + 1, second);
      this.ring(key, value, second < 0 ? undefined : message.slice(second + 1));
    });
  }

  /**
   * Calls `listener` whenever `key` moves, and after the key's first read (a watcher reads its mailbox once
   * when it starts; a move between that read and the poller's first one must still wake it).
   * Returns the function that unwatches.
   */
  watch({ key, channel, field }: Head, listener: Listener): () => void {
    let entry = this.watched.get(key);
    if (!entry) {
      entry = { channel, field, head: undefined, listeners: new Set() };
      this.watched.set(key, entry);
      this.subscribe(channel);
    }
    entry.listeners.add(listener);
    if (entry.head === undefined) this.ring(key); // the first read
    this.schedule();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0 && this.watched.get(key) === entry) {
        this.watched.delete(key);
        this.unannounced.delete(key);
        this.unsubscribe(entry.channel);
      }
    };
  }

  /**
   * Calls `handler` with every message published on `channel`, and `missed` whenever messages may have been lost:
   * when the doorbell connection comes back, at once and again as the heads are read again (see `resync`). Returns
   * the function that stops listening.
   */
  listen({ channel }: { channel: string }, handler: (message: string) => void, missed?: () => void): () => void {
    const handlers = this.handlers.get(channel) ?? new Set();
    this.handlers.set(channel, handlers.add(handler));
    // A function of its own, so that two listeners giving the same `missed` are both told.
    const tell = missed && (() => missed());
    if (tell) this.missed.add(tell);
    this.subscribe(channel);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      if (tell) this.missed.delete(tell);
      handlers.delete(handler);
      if (handlers.size === 0) this.handlers.delete(channel);
      this.unsubscribe(channel);
    };
  }

  /**
   * Whether rings reach this process now, and which doorbell connection this is: something learnt under an
   * earlier connection may have missed a ring while that one was down. `settled`: up, and no resync under way (each
   * tells the listeners of `listen` that messages may have been lost, a process's first connection included).
   */
  doorbells(): { up: boolean; connection: number; settled: boolean } {
    const up = this.commands.doorbells.up();
    return { up, connection: this.doorbellConnection, settled: up && this.resynced && this.resyncing === 0 };
  }

  /** How many head keys and doorbell channels are watched (for logs and tests). */
  get size(): { keys: number; channels: number } {
    return { keys: this.watched.size, channels: this.channels.size };
  }

  /** Moves that a read found and no ring announced, not even late: rings lost on their way. */
  get lost(): number {
    return this.lostRings;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private subscribe(channel: string): void {
    const count = this.channels.get(channel) ?? 0;
    this.channels.set(channel, count + 1);
    if (count === 0)
      this.commands.doorbells
        .subscribe({ channel })
        .catch((err: unknown) => this.warn('doorbell subscribe failed', err));
  }

  private unsubscribe(channel: string): void {
    const count = (this.channels.get(channel) ?? 1) - 1;
    if (count > 0) {
      this.channels.set(channel, count);
      return;
    }
    this.channels.delete(channel);
    this.commands.doorbells
      .unsubscribe({ channel })
      .catch((err: unknown) => this.warn('doorbell unsubscribe failed', err));
  }

  private ring(key: string, value?: string, data?: string): void {
    const entry = this.watched.get(key);
    if (!entry || this.stopped) return;
    if (value !== undefined && entry.head !== undefined) {
      // A ring after a read that already found its move: it was late, not lost.
      if (this.unannounced.get(key) === value) this.unannounced.delete(key);
      if (entry.head !== value) {
        entry.head = value;
        const ring = { value, data };
        for (const listener of entry.listeners) listener(ring);
      }
      return;
    }
    this.rung.add(key);
    if (this.ringScheduled) return;
    this.ringScheduled = true;
    setImmediate(() => {
      this.ringScheduled = false;
      const keys = [...this.rung];
      this.rung.clear();
      this.enqueue(() => this.read(keys));
    });
  }

  /**
   * Reads every watched head now and once more shortly after, and tells the listeners whose messages may have been
   * lost: rings may have been lost while the doorbells were down.
   */
  private resync(): void {
    const all = () => {
      if (this.stopped) return;
      for (const missed of this.missed) missed();
      this.enqueue(() => this.read([...this.watched.keys()]));
    };
    this.resynced = true;
    this.resyncing++;
    all();
    setTimeout(() => {
      this.resyncing--;
      all();
    }, RESYNC_AGAIN_MS).unref();
  }

  /** The audit's next step: the next slice of the watched heads, so that each is read once per `auditMs`. */
  private schedule(): void {
    if (this.timer || this.stopped) return;
    const step = Math.min(AUDIT_STEP_MS, this.options.auditMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.watched.size === 0) return;
      // Moves that the previous step found unannounced and whose ring has not come since: lost.
      this.lostRings += this.unannounced.size;
      if (this.unannounced.size > 0)
        this.log.info(
          { lost: this.unannounced.size, total: this.lostRings },
          'doorbell rings lost; the audit read them',
        );
      this.unannounced.clear();
      const slice: string[] = [];
      this.owed = Math.min(this.owed + (this.watched.size * step) / this.options.auditMs, this.watched.size);
      const count = Math.floor(this.owed);
      this.owed -= count;
      while (slice.length < count) {
        const next = (this.sweep ??= this.watched.keys()).next();
        if (next.done) {
          this.sweep = undefined;
          if (slice.length > 0) break; // a new round starts at the next step
          continue;
        }
        slice.push(next.value);
      }
      if (slice.length > 0) this.enqueue(() => this.read(slice, true));
      this.schedule();
    }, step);
    this.timer.unref();
  }

  /** Runs reads one after another, so a key's listeners see its moves in order. */
  private enqueue(task: () => Promise<void>): void {
    this.running = this.running.then(task).catch((err: unknown) => this.warn('poll failed', err));
  }

  /** Reads the heads of `keys` and wakes the listeners of those that moved; an audit notes the moves no ring announced. */
  private async read(keys: string[], audit = false): Promise<void> {
    const live = keys.filter((key) => this.watched.has(key));
    if (live.length === 0 || this.stopped) return;
    // Issued together: one round trip per node.
    const heads = await this.commands.readHeads({
      heads: live.map((key) => ({ key, field: this.watched.get(key)!.field })),
    });
    this.lastError = '';
    live.forEach((key, i) => {
      const entry = this.watched.get(key);
      if (!entry || entry.head === heads[i]) return;
      if (audit && entry.head !== undefined) this.unannounced.set(key, heads[i] ?? null);
      entry.head = heads[i];
      for (const listener of entry.listeners) listener();
    });
  }

  private warn(message: string, err: unknown): void {
    const text = err instanceof Error ? err.message : String(err);
    if (text !== this.lastError) this.log.warn({ err }, message);
    this.lastError = text;
  }
}
