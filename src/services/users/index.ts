/** The users domain: users and the directory, sessions, admin grants. */
import DataLoader from 'dataloader';
import { userCommands } from '../../redis/users/commands.js';
import type { CacheService } from '../cache/index.js';
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
  { poller, limits, caches }: { poller: MailboxPoller; limits: RateLimits; caches: CacheService },
): Domain<{ sessions: SessionService; users: UserService; admins: AdminService }, UserLoaders> {
  const commands = userCommands(redis, space, replicated);
  const sessions = new SessionService({
    commands,
    poller,
    ttlSeconds: config.sessionTtlSeconds,
    log,
  });
  const admins = new AdminService({ commands, shortcut: config.adminUsers });
  // Filled once by a SCAN of the profiles when a lookup first finds it not ready (src/services/cache/bloom.ts).
  const filter = caches.filter({ name: 'users', source: () => commands.usernames() });
  const known = { filter, absent: caches.cache<true>({ name: 'users', values: false, filter }) };
  return {
    services: { sessions, users: new UserService({ commands, sessions, limits, known }), admins },
    // Batched, not cached: a live subscription keeps one operation context for its life, and a cache would show each
    // sender's grant as the first event read it (and keep an entry per sender it ever saw).
    loaders: () => ({ isAdmin: new DataLoader((usernames) => admins.areAdmins({ usernames }), { cache: false }) }),
    close: () => Promise.resolve(sessions.stop()),
  };
}
