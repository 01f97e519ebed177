/** The chat domain: group chats on pull mailboxes, contacts, notifications, live feeds, scheduled messages. */
import DataLoader from 'dataloader';
import { chatCommands } from '../../redis/chat/commands.js';
import type { QueueService } from '../coordination/queues.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain } from '../shared/domain.js';
import type { UserService } from '../users/users.js';
import { ChatService, type MemberState, type MembersQuery } from './chats.js';
import { ContactService } from './contacts.js';
import { FeedService } from './feeds.js';
import { NotificationService } from './notifications.js';
import { ScheduledMessageService, SEND_SCHEDULED_MESSAGE } from './scheduled.js';

/**
 * Per-operation batching: every chat field resolved in one tick of execution becomes one batch, sent as one
 * pipeline per Redis node (`chats { unreadCount members }` for fifty chats: two batches, not hundreds of trips).
 */
export interface ChatLoaders {
  /** A chat as the viewer, a member, sees it; NOT_FOUND or FORBIDDEN when the viewer may not. */
  chatState: DataLoader<string, MemberState>;
  /** Member names of a chat (see ChatService.members). */
  chatMembers: DataLoader<MembersQuery, string[], string>;
}

export function createChat(
  { redis, space, replicated, config, log }: Base,
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
  const commands = chatCommands(redis, space, replicated);
  const contacts = new ContactService({ commands });
  const notifications = new NotificationService({ commands });
  const chats = new ChatService({ commands, limits: config.chats, users, contacts, notifications, log });
  const scheduled = new ScheduledMessageService({ commands, chats, queues, notifications, log });
  return {
    services: {
      contacts,
      notifications,
      chats,
      feeds: new FeedService({ commands, chats, notifications, poller, log }),
      scheduled,
    },
    loaders: (viewer) => ({
      chatState: new DataLoader((chatIds) => chats.memberStates(viewer ?? '', { chatIds })),
      chatMembers: new DataLoader(
        // A bad argument fails its own query only (DataLoader takes an Error in place of a value).
        (queries) => Promise.all(queries.map((query) => chats.members(query).catch((err: Error) => err))),
        { cacheKeyFn: (q) => `${q.chatId}\0${q.prefix ?? ''}\0${q.first}` },
      ),
    }),
    close: () => chats.close(),
    handlers: [
      {
        queue: scheduled.queueName,
        name: SEND_SCHEDULED_MESSAGE,
        run: (args) => scheduled.deliver(args as { id: string }),
      },
    ],
  };
}
