/** Chats, messages, contacts, notifications and scheduled messages: who is asking, which arguments, one service call. */
import type { Context } from '../context.js';
import { AppError, forbidden, notFound } from '../errors.js';
import { parseChatId, type ChatState, type Message } from '../services/chat/chats.js';
import type { Notification } from '../services/chat/notifications.js';
import type { ScheduledMessage } from '../services/chat/scheduled.js';
import type { User } from '../services/users/users.js';
import { requireViewer } from './auth.js';

/** A chat as the schema passes it around; its fields load the chat's state through the request's DataLoader. */
export interface ChatRef {
  id: string;
}

type Args<T> = { [K in keyof T]?: T[K] | null };

// --- Chat fields -------------------------------------------------------------------------------------------

/** The chat's state for a member; the chat may vanish (its last member left) while a request runs. */
export async function chatState(chat: ChatRef, ctx: Context): Promise<ChatState & { readUpTo: number }> {
  const state = await ctx.loaders.chatState.load(chat.id);
  if (!state) throw notFound(`chat ${chat.id}`);
  if (state.readUpTo === null) throw forbidden(`you are not a member of chat ${chat.id}`);
  return state as ChatState & { readUpTo: number };
}

export const members = async (
  chat: ChatRef,
  args: Args<{ prefix: string; first: number }>,
  ctx: Context,
): Promise<User[]> => {
  await chatState(chat, ctx);
  const names = await ctx.loaders.chatMembers.load([chat.id, args.prefix ?? '', args.first ?? 50]);
  return names.map((username) => ({ username }));
};

export const messages = async (
  chat: ChatRef,
  args: Args<{ after: number; first: number }>,
  ctx: Context,
): Promise<Message[]> =>
  (await ctx.services.chats.read(chat.id, requireViewer(ctx).username, args.after ?? 0, args.first ?? 50)).messages;

// --- Queries -------------------------------------------------------------------------------------------------

export const chats = async (_root: unknown, _args: unknown, ctx: Context): Promise<ChatRef[]> => {
  const viewer = requireViewer(ctx);
  const ids = await ctx.services.chats.chatIdsOf(viewer.username);
  const states = await ctx.loaders.chatState.loadMany(ids);
  const mine = states.filter((s): s is ChatState => !(s instanceof Error) && s !== null && s.readUpTo !== null);
  mine.sort((a, b) => b.lastActivityAt.getTime() - a.lastActivityAt.getTime() || Number(b.id) - Number(a.id));
  return mine.map(({ id }) => ({ id }));
};

export const chat = async (_root: unknown, args: { id: string }, ctx: Context): Promise<ChatRef | null> => {
  requireViewer(ctx);
  const id = parseChatId(args.id, 'id');
  const state = await ctx.loaders.chatState.load(id);
  if (!state) return null;
  if (state.readUpTo === null) throw forbidden(`you are not a member of chat ${id}`);
  return { id };
};

export const contacts = (
  _root: unknown,
  args: Args<{ prefix: string; first: number }>,
  ctx: Context,
): Promise<string[]> => ctx.services.contacts.list(requireViewer(ctx).username, args.prefix ?? '', args.first ?? 10);

export const notifications = (_root: unknown, args: Args<{ first: number }>, ctx: Context): Promise<Notification[]> =>
  ctx.services.notifications.list(requireViewer(ctx).username, 0, args.first ?? 50);

// --- Mutations -----------------------------------------------------------------------------------------------

/** A chat a mutation just changed: forget what this operation loaded of it, so its fields show the change. */
function changed(ctx: Context, id: string): ChatRef {
  ctx.loaders.chatState.clear(id);
  ctx.loaders.chatMembers.clearAll();
  return { id };
}

export const createChat = async (
  _root: unknown,
  args: { members: string[] } & Args<{ message: string; isPublic: boolean }>,
  ctx: Context,
): Promise<ChatRef> => ({
  id: await ctx.services.chats.createChat(
    requireViewer(ctx).username,
    args.members,
    args.message ?? null,
    args.isPublic ?? false,
  ),
});

export const addChatMember = async (
  _root: unknown,
  args: { chatId: string; username: string },
  ctx: Context,
): Promise<ChatRef> => {
  const id = parseChatId(args.chatId);
  await ctx.services.chats.addChatMember(id, requireViewer(ctx).username, args.username);
  return changed(ctx, id);
};

export const removeChatMember = async (
  _root: unknown,
  args: { chatId: string; username: string },
  ctx: Context,
): Promise<boolean> => {
  await ctx.services.chats.removeChatMember(parseChatId(args.chatId), requireViewer(ctx).username, args.username);
  return true;
};

export const joinChat = async (_root: unknown, args: { chatId: string }, ctx: Context): Promise<ChatRef> => {
  const id = parseChatId(args.chatId);
  await ctx.services.chats.joinChat(id, requireViewer(ctx).username);
  return changed(ctx, id);
};

export const leaveChat = async (_root: unknown, args: { chatId: string }, ctx: Context): Promise<boolean> => {
  await ctx.services.chats.leaveChat(parseChatId(args.chatId), requireViewer(ctx).username);
  return true;
};

export const sendMessage = (_root: unknown, args: { chatId: string; text: string }, ctx: Context): Promise<Message> =>
  ctx.services.chats.sendMessage(parseChatId(args.chatId), requireViewer(ctx).username, args.text);

export const markRead = async (
  _root: unknown,
  args: { chatId: string; upTo: number },
  ctx: Context,
): Promise<ChatRef> => {
  const id = parseChatId(args.chatId);
  await ctx.services.chats.markRead(id, requireViewer(ctx).username, args.upTo);
  return changed(ctx, id);
};

export const removeContact = (_root: unknown, args: { username: string }, ctx: Context): Promise<boolean> =>
  ctx.services.contacts.remove(requireViewer(ctx).username, args.username);

export const ackNotifications = (_root: unknown, args: { upTo: number }, ctx: Context): Promise<number> =>
  ctx.services.notifications.ack(requireViewer(ctx).username, args.upTo);

// --- Subscriptions -------------------------------------------------------------------------------------------

export const subscribeMessages = async (
  _root: unknown,
  args: Args<{ chatId: string; markRead: boolean }>,
  ctx: Context,
): Promise<AsyncIterable<Message | AppError>> => {
  const viewer = requireViewer(ctx);
  const chatId = args.chatId === null || args.chatId === undefined ? null : parseChatId(args.chatId);
  if (chatId !== null) await ctx.services.chats.requireMember(chatId, viewer.username);
  return ctx.services.feeds.messageAdded(viewer.username, chatId, args.markRead ?? false, ctx.confirmReceipt);
};

/** A feed item, or the error that ends its subscription (the viewer left or was removed from a chat). */
export const feedItem = <T>(event: T | AppError): T => {
  if (AppError.is(event)) throw event;
  return event;
};

export const subscribeNotifications = (
  _root: unknown,
  _args: unknown,
  ctx: Context,
): AsyncIterable<Notification | AppError> => ctx.services.feeds.notificationAdded(requireViewer(ctx).username);

// --- Scheduled messages ----------------------------------------------------------------------------------------

export const scheduledMessages = (
  _root: unknown,
  args: { chatId: string },
  ctx: Context,
): Promise<ScheduledMessage[]> => ctx.services.scheduled.list(requireViewer(ctx).username, parseChatId(args.chatId));

export const scheduleMessage = (
  _root: unknown,
  args: { chatId: string; text: string; sendAt: Date },
  ctx: Context,
): Promise<ScheduledMessage> =>
  ctx.services.scheduled.scheduleMessage(requireViewer(ctx).username, parseChatId(args.chatId), args.text, args.sendAt);

export const cancelScheduledMessage = (_root: unknown, args: { id: string }, ctx: Context): Promise<boolean> =>
  ctx.services.scheduled.cancelScheduledMessage(requireViewer(ctx).username, args.id);

/** The message it was sent as, while the viewer can still read it (a member, and not yet trimmed). */
export const scheduledMessage = async (
  scheduled: ScheduledMessage,
  _args: unknown,
  ctx: Context,
): Promise<Message | null> => {
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
