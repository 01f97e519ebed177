/**
 * Sessions (the book's chapter 4 login tokens): a 256-bit random token whose SHA-256 names a key holding
 * the username, with an idle expiry that every use pushes back. Lookup and refresh are one command
 * (GETEX ... EX), one round trip. Only the hash is stored, so a read of Redis does not yield usable tokens.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/clients.js';
import type { Keys } from '../redis/keys.js';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export class SessionService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly ttlSeconds: number,
  ) {}

  private key(token: string): string {
    return this.keys.session(createHash('sha256').update(token).digest('hex'));
  }

  /** Whether a string has the shape of a token this service issues (checked before any Redis call). */
  static isWellFormed(token: string): boolean {
    return TOKEN_PATTERN.test(token);
  }

  async create(username: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.redis.set(this.key(token), username, 'EX', this.ttlSeconds);
    return token;
  }

  /** The username the token belongs to, refreshing its idle expiry; null when unknown, expired or revoked. */
  async resolve(token: string): Promise<string | null> {
    if (!SessionService.isWellFormed(token)) return null;
    return this.redis.getex(this.key(token), 'EX', this.ttlSeconds);
  }

  /** Revokes the token at once; true when there was a session to revoke. */
  async revoke(token: string): Promise<boolean> {
    if (!SessionService.isWellFormed(token)) return false;
    return (await this.redis.del(this.key(token))) === 1;
  }
}
