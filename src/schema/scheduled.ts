import * as resolvers from '../resolvers/scheduled.js';
import type { QueueStatus } from '../services/coordination/queues.js';
import type { ScheduledMessage } from '../services/chat/scheduled.js';
import { builder } from './builder.js';
import { MessageType } from './chat.js';

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
      resolve: resolvers.message,
    }),
    failure: t.exposeString('reason', { nullable: true, description: 'Once FAILED: why it was not sent.' }),
  }),
});

const QueueStatusType = builder.objectRef<QueueStatus>('QueueStatus').implement({
  description: 'Tasks of one queue: ready to run, delayed, running on a worker, and failed (kept: the newest 1000).',
  fields: (t) => ({
    name: t.exposeString('name'),
    ready: t.exposeInt('ready'),
    delayed: t.exposeInt('delayed'),
    running: t.exposeInt('running'),
    failed: t.exposeInt('failed'),
  }),
});

builder.queryFields((t) => ({
  scheduledMessages: t.field({
    type: [ScheduledMessageType],
    description:
      "The viewer's own scheduled messages in a chat: pending ones and the 20 most recently finished (kept 7 days), by sendAt.",
    args: { chatId: t.arg.id({ required: true }) },
    resolve: resolvers.scheduledMessages,
  }),
  queues: t.field({ type: [QueueStatusType], description: 'Admin: the task queues.', resolve: resolvers.queues }),
}));

builder.mutationFields((t) => ({
  scheduleMessage: t.field({
    type: ScheduledMessageType,
    description:
      'A member schedules a message (as sendMessage) for `sendAt`: in the past means now, at most 366 days ahead; at most 100 pending per chat.',
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
