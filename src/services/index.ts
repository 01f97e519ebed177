/** Builds every service over one Redis client; services know nothing of GraphQL. */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { closeRedisClient, createSubscriber, type RedisClient } from '../redis/clients.js';
import { accessLogKeys } from '../redis/access-logs/keys.js';
import { chatKeys } from '../redis/chat/keys.js';
import { coordinationKeys } from '../redis/coordination/keys.js';
import { geoKeys } from '../redis/geo/keys.js';
import { keyspace } from '../redis/keys.js';
import { opsKeys } from '../redis/ops/keys.js';
import { telemetryKeys } from '../redis/telemetry/keys.js';
import { userKeys } from '../redis/users/keys.js';
import { AccessLogService } from './access-logs/access-logs.js';
import { AdminService } from './users/admins.js';
import { ChatService } from './chat/chats.js';
import { ContactService } from './chat/contacts.js';
import { CounterService } from './telemetry/counters.js';
import { FeedService } from './chat/feeds.js';
import { GeoService } from './geo/geo.js';
import { RateLimits } from './ops/limits.js';
import { LockService } from './coordination/locks.js';
import { LogService } from './telemetry/logs.js';
import { MailboxPoller } from './mailbox/poller.js';
import { OperationMetrics } from './telemetry/metrics.js';
import { NotificationService } from './chat/notifications.js';
import { OperationsService } from './ops/ops.js';
import { QueueService } from './coordination/queues.js';
import { ScheduledMessageService } from './chat/scheduled.js';
import { SemaphoreService } from './coordination/semaphores.js';
import { StatsService } from './telemetry/stats.js';
import { SessionService } from './users/sessions.js';
import { UserService } from './users/users.js';

export type Services = ReturnType<typeof createServices>;

export function createServices(
  redis: RedisClient,
  config: Pick<Config, 'keyPrefix' | 'sessionTtlSeconds' | 'sessionCheckMs' | 'adminUsers' | 'rateLimits' | 'chats' | 'poll' | 'queues' | 'metrics' | 'accessLogs'>,
  log: Logger,
  /** The clock of counters, statistics and logs (tests move it). */
  now: () => number = Date.now,
) {
  const space = keyspace(config.keyPrefix);
  const keys = {
    ...userKeys(space),
    ...chatKeys(space),
    ...coordinationKeys(space),
    ...telemetryKeys(space),
    ...opsKeys(space),
    ...geoKeys(space),
    ...accessLogKeys(space),
  };
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
