/**
 * Users: sign-up, sign-in and the directory used for autocomplete (the book's chapter 6 autocomplete,
 * over one sorted set read with ZRANGEBYLEX). Usernames are case-insensitive: they are stored in lower case.
 *
 * Sign-up writes two slots (the profile, then the directory). The profile is the truth; if the process dies
 * between the two writes, the user exists but is missing from the directory until the next sign-in, which
 * adds the name again (ZADD is idempotent). Nothing is ever lost, only repeated.
 */
import type { UserCommands } from '../../redis/users/commands.js';
import type { BloomFilter, Cache } from '../cache/index.js';
import { badInput, conflict, unauthenticated } from '../../errors.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import { checkPage, type Page } from '../shared/paging.js';
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
export const DIRECTORY_PAGE: Page = { default: 10, max: 100 };

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

/** What sign-up and sign-in are given: the credentials and the client's address (whose attempts are limited). */
export interface Credentials {
  username: string;
  password: string;
  address: string;
}

export interface UserDeps {
  commands: UserCommands;
  sessions: SessionService;
  limits: RateLimits;
  /**
   * Which usernames exist: each is added to `filter` before its profile is created (a crash between leaves a name
   * the filter has and Redis lacks, which costs a read, never a wrong refusal); `absent` keeps for a while the names
   * a read found no user for (the filter's false positives).
   */
  known: { filter: BloomFilter; absent: Cache<true> };
}

export class UserService {
  private readonly commands: UserCommands;
  private readonly sessions: SessionService;
  private readonly limits: RateLimits;
  private readonly known: UserDeps['known'];

  constructor(deps: UserDeps) {
    ({ commands: this.commands, sessions: this.sessions, limits: this.limits, known: this.known } = deps);
  }

  /** Signs up (sign-ups per address are limited). */
  async signUp(input: Credentials): Promise<Authenticated> {
    await this.limits.signUp({ address: input.address });
    const username = normalizeUsername(input.username);
    if (username.startsWith(SYSTEM_PREFIX))
      throw badInput('username', `names starting with "${SYSTEM_PREFIX}" are reserved`);
    checkPassword(input.password);
    const passwordHash = await hashPassword(input.password);
    if (!(await this.create({ username, passwordHash }))) throw conflict(`username "${username}" is taken`);
    await this.commands.addToDirectory({ username });
    return { token: await this.sessions.create({ username }), user: { username } };
  }

  /** A user nobody signs in as (the access-log processors); nothing when it exists. Not listed in the directory. */
  async createSystemUser({ username }: { username: string }): Promise<void> {
    await this.create({ username, passwordHash: '!' });
  }

  /** Creates the profile unless the name is taken (false): the name goes into the filter first. */
  private async create({ username, passwordHash }: { username: string; passwordHash: string }): Promise<boolean> {
    await this.known.filter.add({ item: username });
    const created = await this.commands.signUp({ username, passwordHash, createdAt: Date.now() });
    // A lookup of the name before it existed may have left a negative entry.
    if (created) await this.known.absent.invalidate({ keys: [username] });
    return created;
  }

  /** Signs in (failed sign-ins per address and username are limited). */
  async signIn(input: Credentials): Promise<Authenticated> {
    const username = input.username.trim().toLowerCase();
    const wellFormed = USERNAME_PATTERN.test(username);
    // Names no user can have share one count: they cannot be guessed right, but each costs a password hash.
    const succeeded = await this.limits.signInAttempt({
      address: input.address,
      username: wellFormed ? username : '?',
    });
    const stored = wellFormed ? await this.commands.passwordHash({ username }) : null;
    const ok =
      input.password.length <= PASSWORD_MAX && (await verifyPassword(input.password, stored ?? (await decoyHash)));
    if (!stored || !ok) throw unauthenticated('wrong username or password');
    await succeeded();
    const [token] = await Promise.all([
      this.sessions.create({ username }),
      this.commands.addToDirectory({ username }), // repairs a sign-up cut short (see above)
    ]);
    return { token, user: { username } };
  }

  /** Usernames starting with `prefix` (case-insensitive), in order; at most `first`. */
  async search({ prefix, first }: { prefix: string; first: number }): Promise<User[]> {
    checkPage('first', first, DIRECTORY_PAGE.max);
    const p = prefix.toLowerCase();
    // A prefix with a character no username can contain matches nobody.
    if (first === 0 || !/^[a-z0-9_.-]{0,32}$/.test(p)) return [];
    const names = await this.commands.directory({ prefix: p, limit: first });
    return names.map((username) => ({ username }));
  }

  /** The usernames among `usernames` that belong to no user. */
  async unknown({ usernames }: { usernames: readonly string[] }): Promise<string[]> {
    // Names the filter never had, or a read found no user for a short while ago, are not read again.
    const exist = await this.known.absent.getMany({
      keys: usernames,
      compute: async (names) => (await this.commands.exist({ usernames: names })).map((e) => (e ? true : null)),
    });
    return usernames.filter((_, i) => exist[i] === null);
  }
}
