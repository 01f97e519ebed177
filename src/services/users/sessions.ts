/**
 * Sessions (the book's chapter 4 login tokens): a random token whose SHA-256 names a key holding the username, with
 * an idle expiry every use pushes back. Resolved sessions are cached per process for CACHE_MS; signOut rings a
 * doorbell and returns once every process that heard it has dropped the token and ended its subscriptions. The
 * sessions of live subscriptions cost nothing while nothing changes: each is asked of Redis again only when a
 * revocation may have been missed or half its idle expiry has passed. How the cache stays honest: docs/subscriptions.md.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { UserCommands } from '../../redis/users/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** How long a resolved session is trusted without asking Redis. */
const CACHE_MS = 5000;
/** Sessions cached per process (least recently used go first). */
const CACHE_MAX = 10_000;
/** How long a revocation waits for the processes it reached to confirm. */
const ACK_WAIT_MS = 1000;
/** How often the watched sessions' known expiries are looked at (in memory). */
const EXPIRY_SCAN_MS = 1000;

interface Cached {
  username: string;
  /** The doorbell connection the session was resolved under. */
  connection: number;
}

/** The live subscriptions of one session, and when it expires unless used (as last pushed back from here). */
interface Watched {
  /** An array, not a Set: most sessions have one watch (a socket's), and a Set's table costs some 150 bytes. */
  callbacks: (() => void)[];
  expiresAt: number;
}

interface Confirmations {
  count: number;
  /** Set once the revoker waits: called when `count` reaches what it waits for. */
  check?: () => void;
}

export interface SessionDeps {
  commands: UserCommands;
  poller: MailboxPoller;
  /** SESSION_TTL: the idle expiry every use pushes back. */
  ttlSeconds: number;
  log: Logger;
}

export class SessionService {
  private readonly cache = new LRUCache<string, Cached>({ max: CACHE_MAX, ttl: CACHE_MS });
  /** Moves on every revocation seen here; a lookup that overlapped one does not fill the cache. */
  private revocations = 0;
  /** The revocation doorbell has been read once: revocations reach this process. */
  private listening = false;
  /** Where other processes confirm the revocations this one rings. */
  private readonly ackChannel: string;
  /** Confirmations received, by the revocation's head value (kept ACK_WAIT_MS). */
  private readonly confirmations = new Map<string, Confirmations>();
  /** What to do when a token is revoked or expires (live subscriptions end), by token hash. */
  private readonly watchers = new Map<string, Watched>();
  private readonly timer: NodeJS.Timeout;
  private readonly unlisten: (() => void)[];

  private readonly commands: UserCommands;
  private readonly poller: MailboxPoller;
  private readonly ttlSeconds: number;
  private readonly log: Logger;

  constructor(deps: SessionDeps) {
    ({ commands: this.commands, poller: this.poller, ttlSeconds: this.ttlSeconds, log: this.log } = deps);
    const { head, bell, ack } = this.commands.revocations;
    this.ackChannel = ack(randomUUID());
    this.unlisten = [
      this.poller.listen({ channel: bell }, (message) => this.heard(message)),
      this.poller.listen({ channel: this.ackChannel }, (value) => this.confirmed(value)),
      this.poller.watch({ key: head, channel: bell }, (ring) => {
        this.listening = true;
        if (ring?.data) return; // heard() has handled it
        // A move found by a read (a ring lost on its way) could be any token.
        this.revocations++;
        this.cache.clear();
        void this.check([...this.watchers.keys()]);
      }),
    ];
    this.timer = setInterval(() => void this.checkNearExpiry(), EXPIRY_SCAN_MS);
    this.timer.unref();
  }

  /** Whether a string has the shape of a token this service issues (checked before any Redis call). */
  static isWellFormed(token: string): boolean {
    return TOKEN_PATTERN.test(token);
  }

  /** A new session of `username`: its token. */
  async create({ username }: { username: string }): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.commands.createSession({ tokenHash: hashOf(token), username, ttlSeconds: this.ttlSeconds });
    return token;
  }

  /** The username the token belongs to, refreshing its idle expiry; null when unknown, expired or revoked. */
  async resolve({ token }: { token: string }): Promise<string | null> {
    if (!SessionService.isWellFormed(token)) return null;
    const hash = hashOf(token);
    const doorbells = this.poller.doorbells();
    const cacheable = this.cacheable(doorbells);
    const cached = this.cached(hash, doorbells);
    if (cached !== undefined) return cached;
    const revocations = this.revocations;
    const username = await this.commands.touchSession({ tokenHash: hash, ttlSeconds: this.ttlSeconds });
    const still = this.poller.doorbells();
    if (
      username !== null &&
      cacheable &&
      still.up &&
      still.connection === doorbells.connection &&
      revocations === this.revocations
    ) {
      this.cache.set(hash, { username, connection: doorbells.connection });
    }
    return username;
  }

  /**
   * Revokes the token in every process: when this returns, every process that can hear revocations has dropped it
   * and ended its subscriptions. True when there was a session to revoke. The revocation is announced even when the
   * session is gone already: the delete and the announcement are on different slots, and a retry of a sign-out cut
   * short between them must still end the token's live subscriptions (an announcement costs no Redis memory).
   */
  async signOut({ token }: { token: string }): Promise<boolean> {
    if (!SessionService.isWellFormed(token)) return false;
    const hash = hashOf(token);
    this.forget(hash);
    const deleted = await this.commands.deleteSession({ tokenHash: hash });
    const { value, receivers } = await this.commands.signOut({ tokenHash: hash, ackChannel: this.ackChannel });
    await this.confirmedBy(value, receivers);
    return deleted;
  }

  /**
   * Calls `onRevoked` once when the token is revoked (in any process) or found expired, for a live subscription to
   * end. The caller has resolved the token, maybe some Redis round trips ago (a subscribe resolver's reads, the
   * response's start): a revocation heard since then reached no watch, so the session is looked up once more now that
   * this one is in place. While watched, the session counts as used: it is pushed back before it expires. Returns
   * the function that stops watching.
   */
  watch({ token }: { token: string }, onRevoked: () => void): () => void {
    const hash = hashOf(token);
    // Set below from Redis, unless the cache vouches for the session: then a GETEX refreshed it at most CACHE_MS ago.
    const watched = this.watchers.get(hash) ?? {
      callbacks: [],
      expiresAt: Date.now() - CACHE_MS + this.ttlSeconds * 1000,
    };
    this.watchers.set(hash, watched);
    const { callbacks } = watched;
    let called = false;
    const callback = () => {
      if (called) return;
      called = true;
      unwatch();
      onRevoked();
    };
    const unwatch = () => {
      const i = callbacks.indexOf(callback);
      if (i >= 0) callbacks.splice(i, 1);
      if (callbacks.length === 0 && this.watchers.get(hash) === watched) this.watchers.delete(hash);
    };
    callbacks.push(callback);
    // As resolve would: a revocation heard here dropped the cached entry, and the session key is deleted before a
    // revocation is rung, so one GETEX finds any revocation that came before this watch; a later one reaches it.
    if (this.cached(hash) === undefined) void this.check([hash]);
    return unwatch;
  }

  stop(): void {
    clearInterval(this.timer);
    for (const unlisten of this.unlisten) unlisten();
  }

  /** A ring of the revocation doorbell: "<head> <value> <token hash> <ack channel>". */
  private heard(message: string): void {
    const [, value, hash, ackChannel] = message.split(' ');
    if (!value || !hash) return;
    this.forget(hash);
    this.revoked(hash);
    if (ackChannel)
      this.commands
        .confirmRevocation({ ackChannel, value })
        .catch((err: unknown) => this.log.warn({ err }, 'revocation confirmation failed'));
  }

  private confirmed(value: string): void {
    const entry = this.confirmations.get(value);
    if (entry) {
      entry.count++;
      entry.check?.();
      return;
    }
    // The confirmation can arrive before the ring's reply: kept until the revoker waits for it.
    const early: Confirmations = { count: 1 };
    this.confirmations.set(value, early);
    setTimeout(() => !early.check && this.confirmations.delete(value), ACK_WAIT_MS).unref();
  }

  /** Resolves once `receivers` processes confirmed revocation `value`, or after ACK_WAIT_MS. */
  private confirmedBy(value: string, receivers: number): Promise<void> {
    const entry = this.confirmations.get(value) ?? { count: 0 };
    this.confirmations.set(value, entry);
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.confirmations.delete(value);
        resolve();
      };
      const timer = setTimeout(() => {
        this.log.warn({ confirmed: entry.count, receivers }, 'revocation not confirmed by every process in time');
        done();
      }, ACK_WAIT_MS);
      entry.check = () => entry.count >= receivers && done();
      entry.check();
    });
  }

  /** Asks Redis again about the watched sessions of which half the idle expiry has passed. */
  private checkNearExpiry(): Promise<void> {
    const due = Date.now() + (this.ttlSeconds * 1000) / 2;
    return this.check([...this.watchers].filter(([, w]) => w.expiresAt <= due).map(([hash]) => hash));
  }

  /**
   * Asks Redis about the sessions of `hashes`, pushing their idle expiry back (a live subscription is use of its
   * session); those that are gone end their subscriptions.
   */
  private async check(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    const expiresAt = Date.now() + this.ttlSeconds * 1000;
    try {
      const usernames = await Promise.all(
        hashes.map((tokenHash) => this.commands.touchSession({ tokenHash, ttlSeconds: this.ttlSeconds })),
      );
      hashes.forEach((hash, i) => {
        if (usernames[i] === null) this.revoked(hash);
        else {
          const watched = this.watchers.get(hash);
          if (watched) watched.expiresAt = expiresAt;
        }
      });
    } catch {
      // Redis away: the sessions stay until a check can tell.
    }
  }

  /** Ends the live subscriptions of a revoked or expired session. */
  private revoked(hash: string): void {
    for (const callback of [...(this.watchers.get(hash)?.callbacks ?? [])]) callback();
  }

  /** Whether resolved sessions may be cached: rings can arrive (the doorbell read once, its connection up). */
  private cacheable(doorbells: { up: boolean }): boolean {
    return this.listening && doorbells.up;
  }

  /** The username cached for the token of `hash`, when the cache vouches for it (cached under this connection). */
  private cached(hash: string, doorbells = this.poller.doorbells()): string | undefined {
    const cached = this.cacheable(doorbells) ? this.cache.get(hash) : undefined;
    return cached?.connection === doorbells.connection ? cached.username : undefined;
  }

  private forget(hash: string): void {
    this.revocations++;
    this.cache.delete(hash);
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
