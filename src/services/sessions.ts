/**
 * Sessions (the book's chapter 4 login tokens): a 256-bit random token whose SHA-256 names a key holding
 * the username, with an idle expiry that every use pushes back (GETEX ... EX: lookup and refresh in one round
 * trip). Only the hash is stored, so a read of Redis does not yield usable tokens.
 *
 * Resolved sessions are cached in the process for CACHE_MS, so most operations make no round trip for their
 * token (a cached token's expiry is pushed back when the entry is renewed, at most CACHE_MS late against a
 * SESSION_TTL of at least a minute). A revocation still takes effect at once everywhere: it deletes the key,
 * then rings the revocation doorbell (MailboxPoller), and every process drops that token from its cache when
 * the ring arrives. The cache is only used while rings can arrive: not before the doorbell has been read once,
 * not while the doorbell connection is down, and an entry cached under an earlier connection is not used. A ring
 * lost on its way is caught by the poller's next full tick, which finds the head moved and empties the cache. A
 * revocation whose process died between the delete and the ring reaches the other processes when their entry
 * expires, CACHE_MS at most (ringing first would be worse: a lookup between the ring and the delete would cache
 * the token again).
 */
import { createHash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { RedisClient } from '../redis/clients.js';
import type { Keys } from '../redis/keys.js';
import type { MailboxPoller } from './mailbox-poller.js';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** How long a resolved session is trusted without asking Redis. */
const CACHE_MS = 5000;
/** Sessions cached per process (least recently used go first). */
const CACHE_MAX = 10_000;

interface Cached {
  username: string;
  /** The doorbell connection the session was resolved under. */
  connection: number;
}

export class SessionService {
  private readonly cache = new LRUCache<string, Cached>({ max: CACHE_MAX, ttl: CACHE_MS });
  /** Moves on every revocation seen here; a lookup that overlapped one does not fill the cache. */
  private revocations = 0;
  /** The revocation doorbell has been read once: revocations reach this process. */
  private listening = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly ttlSeconds: number,
    private readonly poller: MailboxPoller,
  ) {
    const { head, bell } = keys.sessionRevocations();
    poller.watch(head, bell, (ring) => {
      this.listening = true;
      // A ring names the revoked token; a move found by a read (a lost ring) could be any token.
      if (ring?.data) this.forget(ring.data);
      else {
        this.revocations++;
        this.cache.clear();
      }
    });
  }

  /** Whether a string has the shape of a token this service issues (checked before any Redis call). */
  static isWellFormed(token: string): boolean {
    return TOKEN_PATTERN.test(token);
  }

  async create(username: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.redis.set(this.keys.session(hashOf(token)), username, 'EX', this.ttlSeconds);
    return token;
  }

  /** The username the token belongs to, refreshing its idle expiry; null when unknown, expired or revoked. */
  async resolve(token: string): Promise<string | null> {
    if (!SessionService.isWellFormed(token)) return null;
    const hash = hashOf(token);
    const doorbells = this.poller.doorbells();
    const cacheable = this.listening && doorbells.up;
    const cached = cacheable ? this.cache.get(hash) : undefined;
    if (cached?.connection === doorbells.connection) return cached.username;
    const revocations = this.revocations;
    const username = await this.redis.getex(this.keys.session(hash), 'EX', this.ttlSeconds);
    const still = this.poller.doorbells();
    if (username !== null && cacheable && still.up && still.connection === doorbells.connection && revocations === this.revocations) {
      this.cache.set(hash, { username, connection: doorbells.connection });
    }
    return username;
  }

  /** Revokes the token at once, in every process; true when there was a session to revoke. */
  async revoke(token: string): Promise<boolean> {
    if (!SessionService.isWellFormed(token)) return false;
    const hash = hashOf(token);
    this.forget(hash);
    if ((await this.redis.del(this.keys.session(hash))) === 0) return false;
    const { head, bell } = this.keys.sessionRevocations();
    await this.redis.doorbellRing(head, bell, hash);
    return true;
  }

  private forget(hash: string): void {
    this.revocations++;
    this.cache.delete(hash);
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
