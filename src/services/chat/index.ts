/** The chat domain: group chats on pull mailboxes, contacts, notifications, live feeds, scheduled messages. */
import DataLoader from 'dataloader';
import { chatKeys } from '../../redis/chat/keys.js';
import { coordinationKeys } from '../../redis/coordination/keys.js';
import type { QueueService } from '../coordination/queues.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain } from '../shared/domain.js';
import type { UserService } from '../users/users.js';
import { ChatService, type ChatState } from './chats.js';
import { ContactService } from './contacts.js';
import { FeedService } from './feeds.js';
import { NotificationService } from './notifications.js';
import { ScheduledMessageService, SEND_SCHEDULED_MESSAGE } from './scheduled.js';

/**
 * Per-operation batching: every chat field resolved in one tick of execution becomes one batch, sent as one
 * pipeline per Redis node (`chats { unreadCount members }` for fifty chats: two batches, not hundreds of trips).
 */
export interface ChatLoaders {
  /** A chat as the viewer sees it; null when it does not exist. */
  chatState: DataLoader<string, ChatState | null>;
  /** Member names of a chat by [chatId, prefix, first]. */
  chatMembers: DataLoader<readonly [string, string, number], string[], string>;
}

export function createChat(
  { redis, space, config, log }: Base,
  { poller, users, queues }: { poller: MailboxPoller; users: UserService; queues: QueueService },
): Domain<
  {
    contacts: ContactService;
    notifications: NotificationService;
    chats: ChatService;
    feeds: FeedService;
    scheduled: ScheduledMessageService;
  },
  ChatLoaders
> {
  const keys = chatKeys(space);
  const contacts = new ContactService(redis, keys);
  const notifications = new NotificationService(redis, keys);
  const chats = new ChatService(redis, keys, config.chats, users, contacts, notifications, log);
  const scheduled = new ScheduledMessageService(
    redis,
    { ...keys, ...coordinationKeys(space) },
    chats,
    queues,
    notifications,
    log,
  );
  return {
    services: { contacts, notifications, chats, feeds: new FeedService(chats, notifications, poller, log), scheduled },
    loaders: (viewer) => ({
      chatState: new DataLoader((ids) => chats.states(ids, viewer ?? '')),
      chatMembers: new DataLoader(
        // A bad argument fails its own query only (DataLoader takes an Error in place of a value).
        (queries) =>
          Promise.all(
            queries.map(([id, prefix, first]) => chats.members(id, prefix, first).catch((err: Error) => err)),
          ),
        { cacheKeyFn: (q) => q.join('\0') },
      ),
    }),
    handlers: [
      {
        queue: scheduled.queueName,
        name: SEND_SCHEDULED_MESSAGE,
        run: (args) => scheduled.deliver((args as { id: string }).id),
      },
    ],
  };
}
