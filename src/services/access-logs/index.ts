/** The access-logs domain: uploads shared by processors (periodic worker jobs), and the daily visits they count. */
import { accessLogCommands } from '../../redis/access-logs/commands.js';
import type { ChatService } from '../chat/chats.js';
import type { GeoService } from '../geo/geo.js';
import type { RwLockService } from '../coordination/rwlocks.js';
import type { NotificationService } from '../chat/notifications.js';
import type { Base, Domain } from '../shared/domain.js';
import type { UserService } from '../users/users.js';
import { AccessLogService } from './access-logs.js';

export function createAccessLogs(
  { redis, space, config, log }: Base,
  {
    geo,
    rwlocks,
    users,
    chats,
    notifications,
  }: {
    geo: GeoService;
    rwlocks: RwLockService;
    users: UserService;
    chats: ChatService;
    notifications: NotificationService;
  },
): Domain<{ accessLogs: AccessLogService }> {
  const accessLogs = new AccessLogService({
    commands: accessLogCommands(redis, space),
    geo,
    rwlocks,
    users,
    chats,
    notifications,
    options: config.accessLogs,
    log,
  });
  return {
    services: { accessLogs },
    // Processor k of N: one worker at a time runs each.
    jobs: Array.from({ length: config.accessLogs.processors }, (_, i) => ({
      name: `log-processor-${i + 1}`,
      everyMs: config.accessLogs.pollMs,
      run: (signal: AbortSignal) => accessLogs.processPending({ share: i + 1, signal }),
    })),
  };
}
