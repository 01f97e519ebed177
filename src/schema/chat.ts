import * as resolvers from '../resolvers/chat.js';
import type { Message } from '../services/chat/chats.js';
import type { Notification } from '../services/chat/notifications.js';
import type { ScheduledMessage } from '../services/chat/scheduled.js';
import { builder } from './builder.js';
import { UserType } from './users.js';
import { CONTACTS_MAX } from '../services/chat/contacts.js';
import { MEMBERS_PAGE_MAX, MESSAGES_PAGE_MAX } from '../services/chat/chats.js';
import { NOTIFICATIONS_PAGE_MAX } from '../services/chat/notifications.js';
import { AHEAD_MAX_MS, DONE_KEPT, PENDING_MAX, RETENTION_MS } from '../services/chat/scheduled.js';

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
      description: `Members, sorted by name; \`prefix\` autocompletes case-insensitively; \`first\` at most ${MEMBERS_PAGE_MAX}.`,
      args: { prefix: t.arg.string(), first: t.arg.int({ defaultValue: 50 }) },
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
    messages: t.field({
      type: [MessageType],
      description: `Retained messages with an id above \`after\`, ascending; \`first\` at most ${MESSAGES_PAGE_MAX}.`,
      args: { after: t.arg.int({ defaultValue: 0 }), first: t.arg.int({ defaultValue: 50 }) },
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

const NotificationType = builder.objectRef<Notification>('Notification').implement({
  description:
    "An entry of the viewer's mailbox: kind `added`, `removed` (chat membership) or `gap` (unread messages dropped).",
  fields: (t) => ({
    id: t.exposeInt('id'),
    kind: t.exposeString('kind'),
    text: t.exposeString('text'),
    data: t.expose('data', {
      type: 'JSON',
      nullable: true,
      description: 'Details, such as { chatId, from, to } for a gap.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryFields((t) => ({
  chats: t.field({
    type: [ChatType],
    description: "The viewer's chats, most recent activity first.",
    resolve: resolvers.chats,
  }),
  chat: t.field({
    type: ChatType,
    nullable: true,
    description: 'A chat by id: null when none has it, FORBIDDEN when the viewer is not a member.',
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.chat,
  }),
  contacts: t.field({
    type: ['String'],
    description: `The viewer's recent contacts, newest first, filtered by \`prefix\` (case-insensitive); \`first\` at most ${CONTACTS_MAX}.`,
    args: { prefix: t.arg.string({ defaultValue: '' }), first: t.arg.int({ defaultValue: 10 }) },
    resolve: resolvers.contacts,
  }),
  notifications: t.field({
    type: [NotificationType],
    description: `The viewer's unacknowledged notifications, oldest first; \`first\` at most ${NOTIFICATIONS_PAGE_MAX}.`,
    args: { first: t.arg.int({ defaultValue: 50 }) },
    resolve: resolvers.notifications,
  }),
}));

const chatId = (t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0]) => t.arg.id({ required: true });

builder.mutationFields((t) => ({
  createChat: t.field({
    type: ChatType,
    description: 'Creates a chat of the viewer and `members` (existing usernames), with an optional first message.',
    args: {
      members: t.arg.stringList({ required: true }),
      message: t.arg.string(),
      isPublic: t.arg.boolean({ defaultValue: false }),
    },
    resolve: resolvers.createChat,
  }),
  addChatMember: t.field({
    type: ChatType,
    description: "A member adds a user, who starts at the chat's last message.",
    args: { chatId: chatId(t), username: t.arg.string({ required: true }) },
    resolve: resolvers.addChatMember,
  }),
  removeChatMember: t.field({
    type: 'Boolean',
    description: "The chat's creator removes a member (not themself: leaveChat), whose subscriptions to it stop.",
    args: { chatId: chatId(t), username: t.arg.string({ required: true }) },
    resolve: resolvers.removeChatMember,
  }),
  joinChat: t.field({
    type: ChatType,
    description: 'Joins a public chat at its last message.',
    args: { chatId: chatId(t) },
    resolve: resolvers.joinChat,
  }),
  leaveChat: t.field({
    type: 'Boolean',
    description: 'Leaves a chat; the last member leaving deletes it.',
    args: { chatId: chatId(t) },
    resolve: resolvers.leaveChat,
  }),
  sendMessage: t.field({
    type: MessageType,
    description:
      "Sends a message (1 to MAX_MESSAGE_LENGTH characters, not only spaces). It does not move the sender's read position.",
    args: { chatId: chatId(t), text: t.arg.string({ required: true }) },
    resolve: resolvers.sendMessage,
  }),
  markRead: t.field({
    type: ChatType,
    description: 'Moves the read position up to `upTo` (clamped to the last id); never backwards.',
    args: { chatId: chatId(t), upTo: t.arg.int({ required: true }) },
    resolve: resolvers.markRead,
  }),
  removeContact: t.field({
    type: 'Boolean',
    description: "Removes a name from the viewer's recent contacts; false when it was not there.",
    args: { username: t.arg.string({ required: true }) },
    resolve: resolvers.removeContact,
  }),
  ackNotifications: t.field({
    type: 'Int',
    description: 'Acknowledges (deletes) notifications up to `upTo`; returns how many remain.',
    args: { upTo: t.arg.int({ required: true }) },
    resolve: resolvers.ackNotifications,
  }),
}));

builder.subscriptionFields((t) => ({
  messageAdded: t.field({
    type: MessageType,
    description:
      "Messages of one chat, or of all the viewer's chats, from the read position on, then as they are sent: per chat in id order, " +
      'never twice in one subscription. With `markRead`, each delivered batch is marked read once the client has received it ' +
      '(over WebSocket, confirmed by a ping answered with a pong; over SSE, once written). A subscription of one chat ends with ' +
      'FORBIDDEN when the viewer leaves or is removed.',
    args: { chatId: t.arg.id(), markRead: t.arg.boolean({ defaultValue: false }) },
    subscribe: resolvers.subscribeMessages,
    resolve: resolvers.feedItem,
  }),
  notificationAdded: t.field({
    type: NotificationType,
    description: 'Unacknowledged notifications, oldest first, then new ones as they arrive.',
    subscribe: resolvers.subscribeNotifications,
    resolve: resolvers.feedItem,
  }),
}));

// --- Scheduled messages ----------------------------------------------------------------------------------------

const ScheduledStatusType = builder.enumType('ScheduledStatus', {
  values: ['PENDING', 'SENT', 'CANCELLED', 'FAILED'] as const,
});

const ScheduledMessageType = builder.objectRef<ScheduledMessage>('ScheduledMessage').implement({
  description: 'A message the viewer scheduled; the worker sends it once, close to `sendAt`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    chatId: t.exposeID('chatId'),
    text: t.exposeString('text'),
    sendAt: t.expose('sendAt', { type: 'DateTime' }),
    status: t.expose('status', { type: ScheduledStatusType }),
    message: t.field({
      type: MessageType,
      nullable: true,
      description: 'Once SENT: the message, while the viewer is a member and it is retained.',
      resolve: resolvers.scheduledMessage,
    }),
    failure: t.exposeString('reason', { nullable: true, description: 'Once FAILED: why it was not sent.' }),
  }),
});

builder.queryFields((t) => ({
  scheduledMessages: t.field({
    type: [ScheduledMessageType],
    description: `The viewer's own scheduled messages in a chat: pending ones and the ${DONE_KEPT} most recently finished (kept ${RETENTION_MS / 86_400_000} days), by sendAt.`,
    args: { chatId: t.arg.id({ required: true }) },
    resolve: resolvers.scheduledMessages,
  }),
}));

builder.mutationFields((t) => ({
  scheduleMessage: t.field({
    type: ScheduledMessageType,
    description: `A member schedules a message (as sendMessage) for \`sendAt\`: in the past means now, at most ${AHEAD_MAX_MS / 86_400_000} days ahead; at most ${PENDING_MAX} pending per chat.`,
    args: {
      chatId: t.arg.id({ required: true }),
      text: t.arg.string({ required: true }),
      sendAt: t.arg({ type: 'DateTime', required: true }),
    },
    resolve: resolvers.scheduleMessage,
  }),
  cancelScheduledMessage: t.field({
    type: 'Boolean',
    description:
      "Cancels one of the viewer's scheduled messages; false once it is being sent or was sent (or failed, or was cancelled).",
    args: { id: t.arg.id({ required: true }) },
    resolve: resolvers.cancelScheduledMessage,
  }),
}));
