/**
 * Who is an admin: stored grants (a set of usernames), given by `npm run admin -- grant NAME` on the operator's
 * machine or by another admin, so nobody becomes admin by signing up a name first. ADMIN_USERS, a development
 * shortcut, adds names too (config refuses it in production). Asked per operation that needs it, never cached: a
 * revocation takes effect at the next operation. Who may grant is the schema's `admin` scope (or the operator's CLI).
 */
import { conflict, notFound } from '../../errors.js';
import type { UserCommands } from '../../redis/users/commands.js';
import { normalizeUsername } from './users.js';

export interface AdminDeps {
  commands: UserCommands;
  /** ADMIN_USERS: admins in development without a stored grant. */
  shortcut: ReadonlySet<string>;
}

export class AdminService {
  private readonly commands: UserCommands;
  private readonly shortcut: ReadonlySet<string>;

  constructor(deps: AdminDeps) {
    ({ commands: this.commands, shortcut: this.shortcut } = deps);
  }

  async isAdmin({ username }: { username: string }): Promise<boolean> {
    return (await this.areAdmins({ usernames: [username] }))[0]!;
  }

  /** Whether each user is an admin, in one round trip. */
  async areAdmins({ usernames }: { usernames: readonly string[] }): Promise<boolean[]> {
    const granted = await this.commands.haveGrants({ usernames });
    return usernames.map((u, i) => this.shortcut.has(u) || granted[i]!);
  }

  /** Grants admin to an existing user (NOT_FOUND otherwise: a grant never waits for a name to be signed up). */
  async grantAdmin(input: { username: string }): Promise<string> {
    const username = await this.existing(input.username);
    await this.commands.grantAdmin({ username });
    return username;
  }

  /** Takes a stored grant back (nothing when there was none); CONFLICT for the last one. */
  async revokeAdmin(input: { username: string }): Promise<string> {
    const username = await this.existing(input.username);
    if ((await this.commands.revokeAdmin({ username })) === 'last') {
      throw conflict(`"${username}" holds the last admin grant; grant another admin first`);
    }
    return username;
  }

  /** The users holding a stored grant, sorted. */
  async list(): Promise<string[]> {
    return (await this.commands.grants()).sort();
  }

  private async existing(raw: string): Promise<string> {
    const username = normalizeUsername(raw);
    const [exists] = await this.commands.exist({ usernames: [username] });
    if (!exists) throw notFound(`user "${username}"`);
    return username;
  }
}
