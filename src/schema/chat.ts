import * as resolvers from '../resolvers/chat.js';
import type { Message } from '../services/chat/chats.js';
import type { Notification, NotificationKind } from '../services/chat/notifications.js';
import type { ScheduledMessage, ScheduledStatus } from '../services/chat/scheduled.js';
import { builder } from './builder.js';
import { UserType } from './users.js';
import { CONTACTS_PAGE, CONTACTS_PREFIX_DEFAULT } from '../services/chat/contacts.js';
import { IS_PUBLIC_DEFAULT, MEMBERS_PAGE, MESSAGES_AFTER_DEFAULT, MESSAGES_PAGE } from '../services/chat/chats.js';
import { MARK_READ_DEFAULT } from '../services/chat/feeds.js';
import { NOTIFICATION_KINDS, NOTIFICATIONS_PAGE } from '../services/chat/notifications.js';
import { AHEAD_MAX_MS, DONE_KEPT, PENDING_MAX, RETENTION_MS, SCHEDULED_STATUSES } from '../services/chat/scheduled.js';
import { enumValues, firstArg } from './args.js';

const DAY_MS = 86_400_000;

const state =
  <K extends keyof Awaited<ReturnType<typeof resolvers.chatState>>>(key: K) =>
  async (chat: resolvers.ChatRef, _args: unknown, ctx: Parameters<typeof resolvers.chatState>[1]) =>
    (await resolvers.chatState(chat, ctx))[key];

const ChatType = builder.objectRef<resolvers.ChatRef>('Chat').implement({
  description: 'A group chat. Only members see it; its messages wait until every member has read them.',
  fields: (t) => ({
    id: t.exposeID('id'),
    isPublic: t.boolean({ description: 'Whether anyone may join with joinChat.', resolve: state('isPublic') }),
    members: t.field({
      type: [UserType],
      description: 'Members, sorted by name; `prefix` autocompletes case-insensitively.',
      args: { prefix: t.arg.string(), first: firstArg(t.arg, MEMBERS_PAGE) },
      resolve: resolvers.members,
    }),
    memberCount: t.int({ resolve: state('memberCount') }),
    lastMessageId: t.int({
      description: 'The highest message id ever sent in this chat; 0 when none.',
      resolve: state('lastMessageId'),
    }),
    readUpTo: t.int({
      description: "The viewer's read position: the last message id they marked read.",
      resolve: state('readUpTo'),
    }),
    unreadCount: t.int({
      description: 'Messages above the read position.',
      resolve: async (chat, _args, ctx) => {
        const s = await resolvers.chatState(chat, ctx);
        return s.lastMessageId - s.readUpTo;
      },
    }),
    createdAt: t.field({ type: 'DateTime', resolve: state('createdAt') }),
    lastActivityAt: t.field({
      type: 'DateTime',
      description: 'When the last message was sent (or the chat created).',
      resolve: state('lastActivityAt'),
    }),
    messages: t.withAuth({ signedIn: true }).field({
      type: [MessageType],
      description: 'Retained messages with an id above `after`, ascending.',
      args: {
        after: t.arg.int({ required: true, defaultValue: MESSAGES_AFTER_DEFAULT }),
        first: firstArg(t.arg, MESSAGES_PAGE),
      },
      resolve: resolvers.messages,
    }),
  }),
});

export const MessageType = builder.objectRef<Message>('Message').implement({
  description: 'A chat message. Ids are per chat, start at 1 and only grow.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    chatId: t.exposeID('chatId'),
    sender: t.field({ type: UserType, resolve: (m) => ({ username: m.sender }) }),
    text: t.exposeString('text'),
    sentAt: t.expose('sentAt', { type: 'DateTime' }),
  }),
});

/** What each kind of notification tells, and its `data`. */
const NOTIFICATION_KIND_DESCRIPTIONS = {
  added: 'a member added the viewer to a chat; data { chatId, by }',
  removed: "the chat's creator removed the viewer; data { chatId, by }",
  gap: 'unread messages of a chat were dropped by the backlog limit; data { chatId, from, to }',
  scheduleFailed: 'a message the viewer scheduled was not sent; data { chatId, scheduledId }',
  logProcessed: 'an access log the viewer uploaded was processed; data { upload, lines, errors }',
} satisfies Record<NotificationKind, string>;

const NotificationType = builder.objectRef<Notification>('Notification').implement({
  description: "An entry of the viewer's mailbox.",
  fields: (t) => ({
    id: t.exposeInt('id'),
    kind: t.exposeString('kind', {
      description: `What it tells: ${NOTIFICATION_KINDS.map((k) => `\`${k}\` (${NOTIFICATION_KIND_DESCRIPTIONS[k]})`).join(', ')}.`,
    }),
    text: t.exposeString('text'),
    data: t.expose('data', {
      type: 'JSON',
      nullable: true,
      description: 'Details, by kind (see `kind`).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  chats: t.withAuth({ signedIn: true }).field({
    type: [ChatType],
    description: "The viewer's chats, most recent activity first.",
    resolve: resolvers.chats,
  }),
  chat: t.withAuth({ signedIn: true }).field({
    type: ChatType,
    nullable: true,
    description: 'A chat by id: null when none has it, FORBIDDEN when the viewer is not a member.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.chat,
  }),
  contacts: t.withAuth({ signedIn: true }).field({
    type: ['String'],
    description: "The viewer's recent contacts, newest first, filtered by `prefix` (case-insensitive).",
    args: {
      prefix: t.arg.string({ required: true, defaultValue: CONTACTS_PREFIX_DEFAULT }),
      first: firstArg(t.arg, CONTACTS_PAGE),
    },
    resolve: resolvers.contacts,
  }),
  notifications: t.withAuth({ signedIn: true }).field({
    type: [NotificationType],
    description: "The viewer's unacknowledged notifications, oldest first.",
    args: { first: firstArg(t.arg, NOTIFICATIONS_PAGE) },
    resolve: resolvers.notifications,
  }),
}));

const chatId = (t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0]) => t.arg.id({ required: true });

builder.mutationFields((t) => ({
  createChat: t.withAuth({ signedIn: true }).field({
    type: ChatType,
    description: 'Creates a chat of the viewer and `members` (existing usernames), with an optional first message.',
    args: {
      members: t.arg.stringList({ required: true }),
      message: t.arg.string(),
      isPublic: t.arg.boolean({ required: true, defaultValue: IS_PUBLIC_DEFAULT }),
    },
    resolve: resolvers.createChat,
  }),
  addChatMember: t.withAuth({ signedIn: true }).field({
    type: ChatType,
    description: "A member adds a user, who starts at the chat's last message.",
    args: { chatId: chatId(t), username: t.arg.string({ required: true }) },
    resolve: resolvers.addChatMember,
  }),
  removeChatMember: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description: "The chat's creator removes a member (not themself: leaveChat), whose subscriptions to it stop.",
    args: { chatId: chatId(t), username: t.arg.string({ required: true }) },
    resolve: resolvers.removeChatMember,
  }),
  joinChat: t.withAuth({ signedIn: true }).field({
    type: ChatType,
    description: 'Joins a public chat at its last message.',
    args: { chatId: chatId(t) },
    resolve: resolvers.joinChat,
  }),
  leaveChat: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description: 'Leaves a chat; the last member leaving deletes it.',
    args: { chatId: chatId(t) },
    resolve: resolvers.leaveChat,
  }),
  sendMessage: t.withAuth({ signedIn: true }).field({
    type: MessageType,
    description:
      "Sends a message (1 to MAX_MESSAGE_LENGTH characters, not only spaces). It does not move the sender's read position.",
    args: { chatId: chatId(t), text: t.arg.string({ required: true }) },
    resolve: resolvers.sendMessage,
  }),
  markRead: t.withAuth({ signedIn: true }).field({
    type: ChatType,
    description: 'Moves the read position up to `upTo` (clamped to the last id); never backwards.',
    args: { chatId: chatId(t), upTo: t.arg.int({ required: true }) },
    resolve: resolvers.markRead,
  }),
  removeContact: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description: "Removes a name from the viewer's recent contacts; false when it was not there.",
    args: { username: t.arg.string({ required: true }) },
    resolve: resolvers.removeContact,
  }),
  ackNotifications: t.withAuth({ signedIn: true }).field({
    type: 'Int',
    description: 'Acknowledges (deletes) notifications up to `upTo`; returns how many remain.',
    args: { upTo: t.arg.int({ required: true }) },
    resolve: resolvers.ackNotifications,
  }),
}));

builder.subscriptionFields((t) => ({
  messageAdded: t.withAuth({ signedIn: true }).field({
    type: MessageType,
    description:
      "Messages of one chat, or of all the viewer's chats, from the read position on, then as they are sent: per chat in id order, " +
      'never twice in one subscription. With `markRead`, each delivered batch is marked read once the client has received it ' +
      '(over WebSocket, confirmed by a ping answered with a pong; over SSE, once written). A subscription of one chat ends with ' +
      'FORBIDDEN when the viewer leaves or is removed.',
    args: { chatId: t.arg.id(), markRead: t.arg.boolean({ required: true, defaultValue: MARK_READ_DEFAULT }) },
    subscribe: resolvers.subscribeMessages,
    resolve: resolvers.feedItem,
  }),
  notificationAdded: t.withAuth({ signedIn: true }).field({
    type: NotificationType,
    description: 'Unacknowledged notifications, oldest first, then new ones as they arrive.',
    subscribe: resolvers.subscribeNotifications,
    resolve: resolvers.feedItem,
  }),
}));

// --- Scheduled messages ----------------------------------------------------------------------------------------

const SCHEDULED_STATUS_DESCRIPTIONS = {
  PENDING: 'Waiting for `sendAt`, or being sent.',
  SENT: 'Sent: `message` is the message it was sent as.',
  CANCELLED: 'Cancelled by its sender before it was sent.',
  FAILED: 'Not sent (the sender left the chat, or the chat is gone): `failure` says why.',
} satisfies Record<ScheduledStatus, string>;

const ScheduledStatusType = builder.enumType('ScheduledStatus', {
  values: enumValues(SCHEDULED_STATUSES, SCHEDULED_STATUS_DESCRIPTIONS),
});

const ScheduledMessageType = builder.objectRef<ScheduledMessage>('ScheduledMessage').implement({
  description: 'A message the viewer scheduled; the worker sends it once, close to `sendAt`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    chatId: t.exposeID('chatId'),
    text: t.exposeString('text'),
    sendAt: t.expose('sendAt', { type: 'DateTime' }),
    status: t.expose('status', { type: ScheduledStatusType }),
    message: t.withAuth({ signedIn: true }).field({
      type: MessageType,
      nullable: true,
      description: 'Once SENT: the message, while the viewer is a member and it is retained.',
      resolve: resolvers.scheduledMessage,
    }),
    failure: t.exposeString('reason', { nullable: true, description: 'Once FAILED: why it was not sent.' }),
  }),
});

builder.queryFields((t) => ({
  scheduledMessages: t.withAuth({ signedIn: true }).field({
    type: [ScheduledMessageType],
    description: `The viewer's own scheduled messages in a chat: pending ones and the ${DONE_KEPT} most recently finished (kept ${RETENTION_MS / DAY_MS} days), by sendAt.`,
    args: { chatId: t.arg.id({ required: true }) },
    resolve: resolvers.scheduledMessages,
  }),
}));

builder.mutationFields((t) => ({
  scheduleMessage: t.withAuth({ signedIn: true }).field({
    type: ScheduledMessageType,
    description: `A member schedules a message (as sendMessage) for \`sendAt\`: in the past means now, at most ${AHEAD_MAX_MS / DAY_MS} days ahead; at most ${PENDING_MAX} pending per sender and chat.`,
    args: {
      chatId: t.arg.id({ required: true }),
      text: t.arg.string({ required: true }),
      sendAt: t.arg({ type: 'DateTime', required: true }),
    },
    resolve: resolvers.scheduleMessage,
  }),
  cancelScheduledMessage: t.withAuth({ signedIn: true }).field({
    type: 'Boolean',
    description:
      "Cancels one of the viewer's scheduled messages; false once it is being sent or was sent (or failed, or was cancelled).",
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.cancelScheduledMessage,
  }),
}));
