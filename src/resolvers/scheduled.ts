/** Scheduled messages and the queues that send them: who is asking, which arguments, one service call. */
import type { Context } from '../context.js';
import { AppError } from '../errors.js';
import { parseChatId, type Message } from '../services/chat/chats.js';
import type { QueueStatus } from '../services/coordination/queues.js';
import type { ScheduledMessage } from '../services/chat/scheduled.js';
import { requireAdmin, requireViewer } from './auth.js';

export const scheduledMessages = (
  _root: unknown,
  args: { chatId: string },
  ctx: Context,
): Promise<ScheduledMessage[]> => ctx.services.scheduled.list(requireViewer(ctx).username, parseChatId(args.chatId));

export const queues = async (_root: unknown, _args: unknown, ctx: Context): Promise<QueueStatus[]> => {
  await requireAdmin(ctx);
  return Promise.all([ctx.services.scheduled.queueName].map((name) => ctx.services.queues.status(name)));
};

export const scheduleMessage = (
  _root: unknown,
  args: { chatId: string; text: string; sendAt: Date },
  ctx: Context,
): Promise<ScheduledMessage> =>
  ctx.services.scheduled.scheduleMessage(requireViewer(ctx).username, parseChatId(args.chatId), args.text, args.sendAt);

export const cancelScheduledMessage = (_root: unknown, args: { id: string }, ctx: Context): Promise<boolean> =>
  ctx.services.scheduled.cancelScheduledMessage(requireViewer(ctx).username, args.id);

/** The message it was sent as, while the viewer can still read it (a member, and not yet trimmed). */
export const message = async (scheduled: ScheduledMessage, _args: unknown, ctx: Context): Promise<Message | null> => {
  if (scheduled.messageId === null) return null;
  try {
    const read = await ctx.services.chats.read(
      scheduled.chatId,
      requireViewer(ctx).username,
      scheduled.messageId - 1,
      1,
    );
    return read.messages.find((m) => m.id === scheduled.messageId) ?? null;
  } catch (err) {
    if (AppError.is(err) && (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND')) return null;
    throw err;
  }
};
