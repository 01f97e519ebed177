/** Builds every service over one Redis client; services know nothing of GraphQL. */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { closeRedisClient, createSubscriber, type RedisClient } from '../redis/clients.js';
import { createKeys } from '../redis/keys.js';
import { AccessLogService } from './access-logs.js';
import { AdminService } from './admins.js';
import { ChatService } from './chats.js';
import { ContactService } from './contacts.js';
import { CounterService } from './counters.js';
import { FeedService } from './feeds.js';
import { GeoService } from './geo.js';
import { RateLimits } from './limits.js';
import { LockService } from './locks.js';
import { LogService } from './logs.js';
import { MailboxPoller } from './mailbox-poller.js';
import { OperationMetrics } from './metrics.js';
import { NotificationService } from './notifications.js';
import { OperationsService } from './operations.js';
import { QueueService } from './queues.js';
import { ScheduledMessageService } from './scheduled.js';
import { SemaphoreService } from './semaphores.js';
import { StatsService } from './stats.js';
import { SessionService } from './sessions.js';
import { UserService } from './users.js';

export type Services = ReturnType<typeof createServices>;

export function createServices(
  redis: RedisClient,
  config: Pick<Config, 'keyPrefix' | 'sessionTtlSeconds' | 'sessionCheckMs' | 'adminUsers' | 'rateLimits' | 'chats' | 'poll' | 'queues' | 'metrics' | 'accessLogs'>,
  log: Logger,
  /** The clock of counters, statistics and logs (tests move it). */
  now: () => number = Date.now,
) {
  const keys = createKeys(config.keyPrefix);
  const subscriber = createSubscriber(redis, log);
  const poller = new MailboxPoller(redis, subscriber, config.poll, log);
  const sessions = new SessionService(redis, keys, config.sessionTtlSeconds, poller, config.sessionCheckMs, log);
  const limits = new RateLimits(redis, keys, config.rateLimits, log);
  const users = new UserService(redis, keys, sessions, limits);
  const contacts = new ContactService(redis, keys);
  const notifications = new NotificationService(redis, keys);
  const chats = new ChatService(redis, keys, config.chats, users, contacts, notifications, log);
  const queues = new QueueService(redis, keys, config.queues);
  const counters = new CounterService(redis, keys, config.metrics.namesMax, now);
  const stats = new StatsService(redis, keys, now);
  const logs = new LogService(redis, keys, now);
  const metrics = new OperationMetrics(counters, stats, logs, config.metrics, log);
  metrics.start();
  return {
    sessions,
    users,
    limits,
    admins: new AdminService(redis, keys, config.adminUsers),
    operations: new OperationsService(redis, keys),
    contacts,
    notifications,
    chats,
    poller,
    feeds: new FeedService(chats, notifications, poller, log),
    locks: new LockService(redis, keys, poller, log),
    semaphores: new SemaphoreService(redis, keys),
    queues,
    scheduled: new ScheduledMessageService(redis, keys, chats, queues, notifications, log),
    geo: new GeoService(redis, keys),
    accessLogs: new AccessLogService(redis, keys, users, chats, notifications, config.accessLogs, log),
    counters,
    stats,
    logs,
    metrics,
    /** Flushes telemetry, stops the poller and closes the doorbell connection (the caller owns `redis`). */
    async close(): Promise<void> {
      await metrics.stop();
      sessions.stop();
      await poller.stop();
      await closeRedisClient(subscriber);
    },
  };
}
