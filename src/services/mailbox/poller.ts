/**
 * One poller per process for every live subscription here: it watches head keys (counters that move with their
 * mailbox), reads the moved ones in one pipelined round trip per node, and wakes their listeners. Pub/sub is only a
 * doorbell that makes the read happen early; a lost ring costs at most one full tick (POLL_IDLE_MS). The protocol:
 * docs/subscriptions.md.
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
  /** The head as last read; undefined until the first read. */
  head: string | null | undefined;
  listeners: Set<Listener>;
}

export interface PollerOptions {
  intervalMs: number;
  idleMs: number;
}

export interface PollerDeps {
  commands: MailboxCommands;
  options: PollerOptions;
  log: Logger;
}

export class MailboxPoller {
  private readonly watched = new Map<string, Watched>();
  private readonly channels = new Map<string, number>();
  /** Handlers of channels listened to as such (`listen`), by channel. */
  private readonly handlers = new Map<string, Set<(message: string) => void>>();
  private readonly rung = new Set<string>();
  /** Keys whose doorbell rang since the last full tick began: their moves were announced. */
  private readonly announced = new Set<string>();
  private interval: number;
  private timer: NodeJS.Timeout | undefined;
  private ringScheduled = false;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private lastError = '';
  /** Counts the doorbell connection's closes: rings sent while it was down are lost. */
  private doorbellConnection = 0;

  private readonly commands: MailboxCommands;
  private readonly options: PollerOptions;
  private readonly log: Logger;

  constructor(deps: PollerDeps) {
    ({ commands: this.commands, options: this.options, log: this.log } = deps);
    this.interval = this.options.intervalMs;
    const { doorbells } = this.commands;
    doorbells.onClose(() => this.doorbellConnection++);
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
  watch({ key, channel }: Head, listener: Listener): () => void {
    let entry = this.watched.get(key);
    if (!entry) {
      entry = { channel, head: undefined, listeners: new Set() };
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
        this.unsubscribe(entry.channel);
      }
    };
  }

  /** Calls `handler` with every message published on `channel`; returns the function that stops listening. */
  listen({ channel }: { channel: string }, handler: (message: string) => void): () => void {
    const handlers = this.handlers.get(channel) ?? new Set();
    this.handlers.set(channel, handlers.add(handler));
    this.subscribe(channel);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      handlers.delete(handler);
      if (handlers.size === 0) this.handlers.delete(channel);
      this.unsubscribe(channel);
    };
  }

  /**
   * Whether rings reach this process now, and which doorbell connection this is: something learnt under an
   * earlier connection may have missed a ring while that one was down.
   */
  doorbells(): { up: boolean; connection: number } {
    return { up: this.commands.doorbells.up(), connection: this.doorbellConnection };
  }

  /** How many head keys and doorbell channels are watched (for logs and tests). */
  get size(): { keys: number; channels: number } {
    return { keys: this.watched.size, channels: this.channels.size };
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
    this.announced.add(key);
    if (value !== undefined && entry.head !== undefined) {
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
      this.enqueue(async () => {
        await this.read(keys.filter((k) => this.watched.has(k)));
      });
    });
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.enqueue(async () => {
        this.announced.clear();
        const moved = await this.read([...this.watched.keys()]);
        const unannounced = moved.some((key) => !this.announced.has(key));
        const doorbellsDown = !this.commands.doorbells.up();
        this.interval =
          unannounced || doorbellsDown ? this.options.intervalMs : Math.min(this.interval * 2, this.options.idleMs);
      });
      if (this.watched.size > 0) this.schedule();
    }, this.interval);
    this.timer.unref();
  }

  /** Runs reads one after another, so a key's listeners see its moves in order. */
  private enqueue(task: () => Promise<void>): void {
    this.running = this.running.then(task).catch((err: unknown) => this.warn('poll failed', err));
  }

  /** Reads the heads of `keys`, wakes the listeners of those that moved; returns the keys that moved. */
  private async read(keys: string[]): Promise<string[]> {
    if (keys.length === 0 || this.stopped) return [];
    // Issued together: one round trip per node.
    const heads = await this.commands.readHeads({ keys });
    this.lastError = '';
    const moved: string[] = [];
    keys.forEach((key, i) => {
      const entry = this.watched.get(key);
      if (!entry || entry.head === heads[i]) return;
      if (entry.head !== undefined) moved.push(key); // a first read is not a move
      entry.head = heads[i];
      for (const listener of entry.listeners) listener();
    });
    return moved;
  }

  private warn(message: string, err: unknown): void {
    const text = err instanceof Error ? err.message : String(err);
    if (text !== this.lastError) this.log.warn({ err }, message);
    this.lastError = text;
  }
}
