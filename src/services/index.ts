/** Builds every service over one Redis client; services know nothing of GraphQL. */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { closeRedisClient, createSubscriber, type RedisClient } from '../redis/clients.js';
import { createKeys } from '../redis/keys.js';
import { ChatService } from './chats.js';
import { ContactService } from './contacts.js';
import { FeedService } from './feeds.js';
import { LockService } from './locks.js';
import { MailboxPoller } from './mailbox-poller.js';
import { NotificationService } from './notifications.js';
import { OperationsService } from './operations.js';
import { QueueService } from './queues.js';
import { ScheduledMessageService } from './scheduled.js';
import { SemaphoreService } from './semaphores.js';
import { SessionService } from './sessions.js';
import { UserService } from './users.js';

export type Services = ReturnType<typeof createServices>;

export function createServices(
  redis: RedisClient,
  config: Pick<Config, 'keyPrefix' | 'sessionTtlSeconds' | 'chats' | 'poll' | 'queues'>,
  log: Logger,
) {
  const keys = createKeys(config.keyPrefix);
  const sessions = new SessionService(redis, keys, config.sessionTtlSeconds);
  const users = new UserService(redis, keys, sessions);
  const contacts = new ContactService(redis, keys);
  const notifications = new NotificationService(redis, keys);
  const chats = new ChatService(redis, keys, config.chats, users, contacts, notifications, log);
  const subscriber = createSubscriber(redis, log);
  const poller = new MailboxPoller(redis, subscriber, config.poll, log);
  const queues = new QueueService(redis, keys, config.queues);
  return {
    sessions,
    users,
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
    /** Stops the poller and closes the doorbell connection (the caller owns `redis`). */
    async close(): Promise<void> {
      await poller.stop();
      await closeRedisClient(subscriber);
    },
  };
}
