/**
 * Users: sign-up, sign-in and the directory used for autocomplete (the book's chapter 6 autocomplete,
 * over one sorted set read with ZRANGEBYLEX). Usernames are case-insensitive: they are stored in lower case.
 *
 * Sign-up writes two slots (the profile, then the directory). The profile is the truth; if the process dies
 * between the two writes, the user exists but is missing from the directory until the next sign-in, which
 * adds the name again (ZADD is idempotent). Nothing is ever lost, only repeated.
 */
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/users/commands.js';
import type { UserKeys } from '../../redis/users/keys.js';
import { badInput, conflict, unauthenticated } from '../../errors.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import { checkPage } from '../shared/paging.js';
import type { RateLimits } from '../ops/limits.js';
import type { SessionService } from './sessions.js';

export interface User {
  username: string;
}
export interface Authenticated {
  token: string;
  user: User;
}

export const USERNAME_PATTERN = /^[a-z0-9_.-]{3,32}$/;
/** Reserved for system users (the access-log processors, logproc-1..N). */
export const SYSTEM_PREFIX = 'logproc-';
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
export const DIRECTORY_PAGE_MAX = 100;

export function normalizeUsername(raw: string, argument = 'username'): string {
  const username = raw.trim().toLowerCase();
  if (!USERNAME_PATTERN.test(username)) {
    throw badInput(argument, 'must be 3 to 32 characters of a-z, 0-9, "_", "." or "-"');
  }
  return username;
}

function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw badInput('password', `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
}

export class UserService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: UserKeys,
    private readonly sessions: SessionService,
    private readonly limits: RateLimits,
  ) {}

  /** Signs up from the client `address` (sign-ups per address are limited). */
  async signUp(rawUsername: string, password: string, address: string): Promise<Authenticated> {
    await this.limits.signUp(address);
    const username = normalizeUsername(rawUsername);
    if (username.startsWith(SYSTEM_PREFIX))
      throw badInput('username', `names starting with "${SYSTEM_PREFIX}" are reserved`);
    checkPassword(password);
    const passwordHash = await hashPassword(password);
    if (!(await commands.signUp(this.redis, this.keys, { username, passwordHash, createdAt: Date.now() }))) {
      throw conflict(`username "${username}" is taken`);
    }
    await this.redis.zadd(this.keys.userDirectory(), 0, username);
    return { token: await this.sessions.create(username), user: { username } };
  }

  /** A user nobody signs in as (the access-log processors); nothing when it exists. Not listed in the directory. */
  async createSystemUser(username: string): Promise<void> {
    await commands.signUp(this.redis, this.keys, { username, passwordHash: '!', createdAt: Date.now() });
  }

  /** Signs in from the client `address` (failed sign-ins per address and username are limited). */
  async signIn(rawUsername: string, password: string, address: string): Promise<Authenticated> {
    const username = rawUsername.trim().toLowerCase();
    const wellFormed = USERNAME_PATTERN.test(username);
    // Names no user can have share one count: they cannot be guessed right, but each costs a password hash.
    const succeeded = await this.limits.signInAttempt(address, wellFormed ? username : '?');
    const stored = wellFormed ? await this.redis.hget(this.keys.userProfile(username), 'passwordHash') : null;
    const ok = password.length <= PASSWORD_MAX && (await verifyPassword(password, stored ?? (await decoyHash)));
    if (!stored || !ok) throw unauthenticated('wrong username or password');
    await succeeded();
    const [token] = await Promise.all([
      this.sessions.create(username),
      this.redis.zadd(this.keys.userDirectory(), 0, username), // repairs a sign-up cut short (see above)
    ]);
    return { token, user: { username } };
  }

  /** Usernames starting with `prefix` (case-insensitive), in order; at most `first`. */
  async search(prefix: string, first: number): Promise<User[]> {
    checkPage('first', first, DIRECTORY_PAGE_MAX);
    const p = prefix.toLowerCase();
    // A prefix with a character no username can contain matches nobody.
    if (first === 0 || !/^[a-z0-9_.-]{0,32}$/.test(p)) return [];
    // \x7f sorts after every character a username may contain.
    const names = await this.redis.zrangebylex(this.keys.userDirectory(), `[${p}`, `[${p}\x7f`, 'LIMIT', 0, first);
    return names.map((username) => ({ username }));
  }

  /** The usernames among `usernames` that belong to no user. */
  async unknown(usernames: readonly string[]): Promise<string[]> {
    const exists = await Promise.all(usernames.map((u) => this.redis.exists(this.keys.userProfile(u))));
    return usernames.filter((_, i) => exists[i] === 0);
  }
}
