/**
 * Who is an admin: stored grants (a set of usernames), given by `npm run admin -- grant NAME` on the operator's
 * machine or by another admin, so nobody becomes admin by signing up a name first. ADMIN_USERS, a development
 * shortcut, adds names too (config refuses it in production). Asked per operation that needs it, never cached: a
 * revocation takes effect at the next operation.
 */
import { conflict, notFound } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/users/commands.js';
import type { UserKeys } from '../../redis/users/keys.js';
import { normalizeUsername } from './users.js';

export class AdminService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: UserKeys,
    /** ADMIN_USERS: admins in development without a stored grant. */
    private readonly shortcut: ReadonlySet<string>,
  ) {}

  async isAdmin(username: string): Promise<boolean> {
    return this.shortcut.has(username) || (await this.redis.sismember(this.keys.admins(), username)) === 1;
  }

  /** Whether each user is an admin, in one round trip. */
  async areAdmins(usernames: readonly string[]): Promise<boolean[]> {
    const stored = usernames.length > 0 ? await this.redis.smismember(this.keys.admins(), ...usernames) : [];
    return usernames.map((u, i) => this.shortcut.has(u) || stored[i] === 1);
  }

  /** Grants admin to an existing user (NOT_FOUND otherwise: a grant never waits for a name to be signed up). */
  async grantAdmin(rawUsername: string): Promise<string> {
    const username = normalizeUsername(rawUsername);
    if ((await this.redis.exists(this.keys.userProfile(username))) === 0) throw notFound(`user "${username}"`);
    await this.redis.sadd(this.keys.admins(), username);
    return username;
  }

  /** Takes a stored grant back (nothing when there was none); CONFLICT for the last one. */
  async revokeAdmin(rawUsername: string): Promise<string> {
    const username = normalizeUsername(rawUsername);
    if ((await this.redis.exists(this.keys.userProfile(username))) === 0) throw notFound(`user "${username}"`);
    if ((await commands.revokeAdmin(this.redis, this.keys, { username })) === 'last') {
      throw conflict(`"${username}" holds the last admin grant; grant another admin first`);
    }
    return username;
  }

  /** The users holding a stored grant, sorted. */
  async list(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.admins())).sort();
  }
}
