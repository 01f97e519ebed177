/**
 * The store of automatic persisted queries (Apollo's APQ): GraphQL documents by their SHA-256, in Redis so that a
 * hash registered through one process is known to every other, bounded so that clients registering documents
 * without end cannot grow it: a document larger than `maxDocumentBytes` is not stored, and past `maxEntries` the
 * least recently used go, in the script that registers. A hash's document never changes, so each process keeps the
 * documents it used in memory (an LRU) and serves them without Redis; it marks such a document used in Redis at most
 * once a minute (gathered, one script call every few seconds), so "least recently used" stays true to about a minute.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { PersistedQueryCommands } from '../../redis/persisted-queries/commands.js';

/** A SHA-256 as APQ clients send it: 64 lowercase hex digits. */
export const SHA256 = /^[0-9a-f]{64}$/;
/** Documents a process keeps in memory, at most this many ... */
export const LOCAL_MAX = 2000;
/** ... and this many characters of them together. */
export const LOCAL_MAX_CHARS = 8 * 1024 * 1024;
/** A document served from memory is marked used in Redis at most this often (per process). */
const TOUCH_EVERY_MS = 60_000;
/** Those marks are sent together, one script call at most this often. */
const TOUCH_FLUSH_MS = 5000;

export interface PersistedQueryOptions {
  /** The most documents the store holds (APQ_MAX_ENTRIES). */
  maxEntries: number;
  /** The largest document stored, in bytes of UTF-8 (APQ_MAX_DOCUMENT_BYTES). */
  maxDocumentBytes: number;
}

export interface PersistedQueryDeps {
  commands: PersistedQueryCommands;
  options: PersistedQueryOptions;
  log: Logger;
}

/** What registering did: stored (new in Redis), known (already stored), too large (not stored). */
export type Registration = 'stored' | 'known' | 'too-large';

interface Local {
  document: string;
  /** When this process last marked it used in Redis (ms). */
  touchedAt: number;
}

/** What the store did since the process started, for `GET /metrics`. */
export interface PersistedQueryFigures {
  /** Lookups answered from memory, from Redis, and not found. */
  memory: number;
  redis: number;
  missing: number;
  /** Documents this process stored, those the store evicted for them, and documents too large to store. */
  stored: number;
  evicted: number;
  tooLarge: number;
}

export class PersistedQueryStore {
  readonly figures: PersistedQueryFigures = { memory: 0, redis: 0, missing: 0, stored: 0, evicted: 0, tooLarge: 0 };
  private readonly local = new LRUCache<string, Local>({
    max: LOCAL_MAX,
    maxSize: LOCAL_MAX_CHARS,
    sizeCalculation: (entry) => Math.max(1, entry.document.length),
  });
  private readonly touches = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private lastError = '';
  private readonly commands: PersistedQueryCommands;
  private readonly options: PersistedQueryOptions;
  private readonly log: Logger;

  constructor(deps: PersistedQueryDeps) {
    ({ commands: this.commands, options: this.options, log: this.log } = deps);
  }

  /** The document registered under `sha256`, or undefined (a malformed hash is never looked up). */
  get({ sha256 }: { sha256: string }): string | undefined | Promise<string | undefined> {
    const entry = this.local.get(sha256);
    if (entry) {
      this.figures.memory++;
      const now = Date.now();
      if (now - entry.touchedAt >= TOUCH_EVERY_MS) {
        entry.touchedAt = now;
        this.touch(sha256);
      }
      return entry.document;
    }
    if (!SHA256.test(sha256)) {
      this.figures.missing++;
      return undefined;
    }
    return this.commands.read({ sha256 }).then((document) => {
      if (document === null) {
        this.figures.missing++;
        return undefined;
      }
      this.figures.redis++;
      this.local.set(sha256, { document, touchedAt: Date.now() });
      return document;
    });
  }

  /**
   * Registers `document` under `sha256`, which the caller has checked is its SHA-256: stored in Redis unless this
   * process knows it is already (then no promise), or it is larger than `maxDocumentBytes`.
   */
  register({ sha256, document }: { sha256: string; document: string }): Registration | Promise<Registration> {
    if (this.local.has(sha256)) return 'known';
    if (!SHA256.test(sha256)) throw new Error('a persisted query is registered under its SHA-256 in lowercase hex');
    if (Buffer.byteLength(document) > this.options.maxDocumentBytes) {
      this.figures.tooLarge++;
      return 'too-large';
    }
    return this.commands.register({ sha256, document, max: this.options.maxEntries }).then((evicted) => {
      this.figures.stored++;
      this.figures.evicted += evicted;
      this.local.set(sha256, { document, touchedAt: Date.now() });
      return 'stored' as const;
    });
  }

  /** How many documents the store holds (every process's). */
  size(): Promise<number> {
    return this.commands.size();
  }

  /** Sends the marks of use still waiting. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushTouches();
  }

  private touch(sha256: string): void {
    this.touches.add(sha256);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushTouches();
    }, TOUCH_FLUSH_MS);
    this.timer.unref();
  }

  private async flushTouches(): Promise<void> {
    if (this.touches.size === 0) return;
    const sha256s = [...this.touches];
    this.touches.clear();
    try {
      await this.commands.touch({ sha256s });
      this.lastError = '';
    } catch (err) {
      // A lost mark only makes a document look older than it is: it may be evicted sooner, and registered again.
      const message = err instanceof Error ? err.message : String(err);
      if (message !== this.lastError) this.log.warn({ err }, 'marking persisted queries used failed');
      this.lastError = message;
    }
  }
}
