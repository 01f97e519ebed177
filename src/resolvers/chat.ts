/** Chats, messages, contacts, notifications and scheduled messages: who is asking (the schema's scopes), one service call. */
import type { Context, SignedIn } from '../context.js';
import { AppError } from '../errors.js';
import type { MemberState, Message } from '../services/chat/chats.js';
import type { Notification } from '../services/chat/notifications.js';
import type { ScheduledMessage } from '../services/chat/scheduled.js';
import type { User } from '../services/users/users.js';

/** A chat as the schema passes it around; its fields load the chat's state through the request's DataLoader. */
export interface ChatRef {
  id: string;
}

// --- Chat fields -------------------------------------------------------------------------------------------

/** The chat's state for a member (the loader refuses others); the chat may vanish while a request runs. */
export const chatState = (chat: ChatRef, ctx: Context): Promise<MemberState> => ctx.loaders.chatState.load(chat.id);

export const members = async (
  chat: ChatRef,
  args: { prefix?: string | null; first: number },
  ctx: Context,
): Promise<User[]> => {
  await chatState(chat, ctx);
  const names = await ctx.loaders.chatMembers.load({ chatId: chat.id, ...args });
  return names.map((username) => ({ username }));
};

export const messages = async (
  chat: ChatRef,
  args: { after: number; first: number },
  ctx: SignedIn,
): Promise<Message[]> => (await ctx.services.chats.read(ctx.viewer.username, { chatId: chat.id, ...args })).messages;

// --- Queries -------------------------------------------------------------------------------------------------

/** Chats a service call read whole: the request's DataLoader keeps them, so their fields read nothing again. */
function loaded(ctx: Context, states: MemberState[]): ChatRef[] {
  for (const state of states) ctx.loaders.chatState.prime(state.id, state);
  return states;
}

export const chats = async (_root: unknown, _args: unknown, ctx: SignedIn): Promise<ChatRef[]> =>
  loaded(ctx, await ctx.services.chats.chatsOf(ctx.viewer.username));

export const chat = async (_root: unknown, args: { id: string }, ctx: SignedIn): Promise<ChatRef | null> => {
  const state = await ctx.services.chats.chat(ctx.viewer.username, args);
  return state && loaded(ctx, [state])[0]!;
};

export const contacts = (_root: unknown, args: { prefix: string; first: number }, ctx: SignedIn): Promise<string[]> =>
  ctx.services.contacts.list(ctx.viewer.username, args);

export const notifications = (_root: unknown, args: { first: number }, ctx: SignedIn): Promise<Notification[]> =>
  ctx.services.notifications.list(ctx.viewer.username, args);

// --- Mutations -----------------------------------------------------------------------------------------------

/** A chat a mutation just changed (its id accepted by the service): forget what this operation loaded of it. */
function changed(ctx: Context, id: string): ChatRef {
  ctx.loaders.chatState.clear(id);
  ctx.loaders.chatMembers.clearAll();
  return { id };
}

export const createChat = async (
  _root: unknown,
  args: { members: string[]; message?: string | null; isPublic: boolean },
  ctx: SignedIn,
): Promise<ChatRef> => ({ id: await ctx.services.chats.createChat(ctx.viewer.username, args) });

export const addChatMember = async (
  _root: unknown,
  args: { chatId: string; username: string },
  ctx: SignedIn,
): Promise<ChatRef> => {
  await ctx.services.chats.addChatMember(ctx.viewer.username, args);
  return changed(ctx, args.chatId);
};

export const removeChatMember = async (
  _root: unknown,
  args: { chatId: string; username: string },
  ctx: SignedIn,
): Promise<boolean> => {
  await ctx.services.chats.removeChatMember(ctx.viewer.username, args);
  return true;
};

export const joinChat = async (_root: unknown, args: { chatId: string }, ctx: SignedIn): Promise<ChatRef> => {
  await ctx.services.chats.joinChat(ctx.viewer.username, args);
  return changed(ctx, args.chatId);
};

export const leaveChat = async (_root: unknown, args: { chatId: string }, ctx: SignedIn): Promise<boolean> => {
  await ctx.services.chats.leaveChat(ctx.viewer.username, args);
  return true;
};

export const sendMessage = (_root: unknown, args: { chatId: string; text: string }, ctx: SignedIn): Promise<Message> =>
  ctx.services.chats.sendMessage(ctx.viewer.username, args);

export const markRead = async (
  _root: unknown,
  args: { chatId: string; upTo: number },
  ctx: SignedIn,
): Promise<ChatRef> => {
  await ctx.services.chats.markRead(ctx.viewer.username, args);
  return changed(ctx, args.chatId);
};

export const removeContact = (_root: unknown, args: { username: string }, ctx: SignedIn): Promise<boolean> =>
  ctx.services.contacts.remove(ctx.viewer.username, args);

export const ackNotifications = (_root: unknown, args: { upTo: number }, ctx: SignedIn): Promise<number> =>
  ctx.services.notifications.ack(ctx.viewer.username, args);

// --- Subscriptions -------------------------------------------------------------------------------------------

export const subscribeMessages = (
  _root: unknown,
  args: { chatId?: string | null; markRead: boolean },
  ctx: SignedIn,
): Promise<AsyncIterable<Message | AppError>> =>
  ctx.services.feeds.messageAdded(ctx.viewer.username, args, ctx.confirmReceipt);

/** A feed item, or the error that ends its subscription (the viewer left or was removed from a chat). */
export const feedItem = <T>(event: T | AppError): T => {
  if (AppError.is(event)) throw event;
  return event;
};

export const subscribeNotifications = (
  _root: unknown,
  _args: unknown,
  ctx: SignedIn,
): AsyncIterable<Notification | AppError> => ctx.services.feeds.notificationAdded(ctx.viewer.username);

// --- Scheduled messages ----------------------------------------------------------------------------------------

export const scheduledMessages = (
  _root: unknown,
  args: { chatId: string },
  ctx: SignedIn,
): Promise<ScheduledMessage[]> => ctx.services.scheduled.list(ctx.viewer.username, args);

export const scheduleMessage = (
  _root: unknown,
  args: { chatId: string; text: string; sendAt: Date },
  ctx: SignedIn,
): Promise<ScheduledMessage> => ctx.services.scheduled.scheduleMessage(ctx.viewer.username, args);

export const cancelScheduledMessage = (_root: unknown, args: { id: string }, ctx: SignedIn): Promise<boolean> =>
  ctx.services.scheduled.cancelScheduledMessage(ctx.viewer.username, args);

/** The message it was sent as, while the viewer can still read it (a member, and not yet trimmed). */
export const scheduledMessage = (scheduled: ScheduledMessage, _args: unknown, ctx: SignedIn): Promise<Message | null> =>
  ctx.services.chats.message(ctx.viewer.username, { chatId: scheduled.chatId, id: scheduled.messageId });
