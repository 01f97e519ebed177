/** The users domain: users and the directory, sessions, admin grants. */
import DataLoader from 'dataloader';
import { userCommands } from '../../redis/users/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { RateLimits } from '../ops/limits.js';
import type { Base, Domain } from '../shared/domain.js';
import { AdminService } from './admins.js';
import { SessionService } from './sessions.js';
import { UserService } from './users.js';

export interface UserLoaders {
  /** Whether a user is an admin (User.isAdmin). */
  isAdmin: DataLoader<string, boolean>;
}

export function createUsers(
  { redis, space, replicated, config, log }: Base,
  { poller, limits }: { poller: MailboxPoller; limits: RateLimits },
): Domain<{ sessions: SessionService; users: UserService; admins: AdminService }, UserLoaders> {
  const commands = userCommands(redis, space, replicated);
  const sessions = new SessionService({
    commands,
    poller,
    ttlSeconds: config.sessionTtlSeconds,
    log,
  });
  const admins = new AdminService({ commands, shortcut: config.adminUsers });
  return {
    services: { sessions, users: new UserService({ commands, sessions, limits }), admins },
    loaders: () => ({ isAdmin: new DataLoader((usernames) => admins.areAdmins({ usernames })) }),
    close: () => Promise.resolve(sessions.stop()),
  };
}
