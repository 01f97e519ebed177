/**
 * Scheduled messages (docs/api.md, "Scheduled messages and task queues"): a record and the task that sends it are written by one script,
 * on the slot of the queue; the worker's handler sends the message once however often it runs:
 * 1. claim: PENDING becomes SENDING (from then on a cancel is too late; a SENDING one is claimed again);
 * 2. send: sendMessage remembers in the chat, for a day, which scheduled message it sent, so a repeat (a retry, or
 *    a worker taken for dead racing its replacement) sends nothing;
 * 3. finish: SENT with the message id, or FAILED with the reason after notifying the sender.
 * A crash between steps repeats the later ones; none is lost. Finished records expire after RETENTION_MS.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, badInput, forbidden, notFound } from '../../errors.js';
import type { ChatCommands } from '../../redis/chat/commands.js';
import { STATUS } from '../../redis/status.js';
import { parseChatId, type ChatService } from './chats.js';
import type { NotificationService } from './notifications.js';
import type { QueueService } from '../coordination/queues.js';

/** What becomes of a scheduled message, as its sender sees it; the schema describes each (schema/chat.ts). */
export const SCHEDULED_STATUSES = ['PENDING', 'SENT', 'CANCELLED', 'FAILED'] as const;
export type ScheduledStatus = (typeof SCHEDULED_STATUSES)[number];

export interface ScheduledMessage {
  id: string;
  chatId: string;
  sender: string;
  text: string;
  sendAt: Date;
  status: ScheduledStatus;
  /** The id it was sent as (SENT). */
  messageId: number | null;
  /** Why it was not sent (FAILED). */
  reason: string | null;
}

export interface ScheduledMessageDeps {
  commands: ChatCommands;
  chats: ChatService;
  queues: QueueService;
  notifications: NotificationService;
  log: Logger;
}

/** The task that sends one, on the scheduled-messages queue. */
export const SEND_SCHEDULED_MESSAGE = 'send-scheduled-message';
/** Pending scheduled messages per sender and chat; past it, scheduling is BUSY. */
export const PENDING_MAX = 100;
/** Finished ones kept per sender and chat, each for RETENTION_MS. */
export const DONE_KEPT = 20;
export const RETENTION_MS = 7 * 24 * 3600 * 1000;
/** How far ahead a message may be scheduled. */
export const AHEAD_MAX_MS = 366 * 24 * 3600 * 1000;
const ID = /^[A-Za-z0-9_-]{16}$/;
const DAY_MS = 24 * 3600 * 1000;

/** The status a sender sees of a stored one: SENDING is internal, still pending to the user until it is sent. */
function statusOf(stored: string): ScheduledStatus {
  const status = stored === 'SENDING' ? 'PENDING' : stored;
  if (!(SCHEDULED_STATUSES as readonly string[]).includes(status))
    throw new Error(`unexpected scheduled message status ${stored}`);
  return status as ScheduledStatus;
}

export class ScheduledMessageService {
  private readonly commands: ChatCommands;
  private readonly chats: ChatService;
  private readonly queues: QueueService;
  private readonly notifications: NotificationService;
  private readonly log: Logger;

  constructor(deps: ScheduledMessageDeps) {
    ({
      commands: this.commands,
      chats: this.chats,
      queues: this.queues,
      notifications: this.notifications,
      log: this.log,
    } = deps);
  }

  get queueName(): string {
    return this.commands.scheduledQueue;
  }

  async scheduleMessage(
    sender: string,
    input: { chatId: string; text: string; sendAt: Date },
  ): Promise<ScheduledMessage> {
    const chatId = parseChatId(input);
    const text = this.chats.checkText({ text: input.text, argument: 'text' });
    const at = input.sendAt.getTime();
    if (!Number.isFinite(at)) throw badInput('sendAt', 'must be a date and time');
    if (at - Date.now() > AHEAD_MAX_MS) throw badInput('sendAt', `must be at most ${AHEAD_MAX_MS / DAY_MS} days ahead`);
    await this.chats.requireMember(sender, { chatId });
    const id = randomBytes(12).toString('base64url');
    const task = this.queues.newTask({ name: SEND_SCHEDULED_MESSAGE, args: { id } });
    const created = await this.commands.scheduleMessage({
      id,
      chatId,
      sender,
      text,
      sendAt: at,
      task,
      pendingMax: PENDING_MAX,
    });
    if (!created)
      throw new AppError(
        'BUSY',
        `you already have ${PENDING_MAX} messages scheduled in chat ${chatId}; cancel some or wait until they are sent`,
      );
    const message = await this.get({ id });
    if (!message) throw new Error(`scheduled message ${id} vanished after it was created`);
    return message;
  }

  /** Cancels the viewer's pending scheduled message; false when it is too late (sending or sent already). */
  async cancelScheduledMessage(viewer: string, input: { id: string }): Promise<boolean> {
    const id = checkId(input.id);
    const owner = await this.commands.scheduledOwner({ id });
    if (!owner) throw notFound(`scheduled message ${id}`);
    if (owner.sender !== viewer) throw forbidden(`scheduled message ${id} is not yours`);
    const result = await this.commands.cancelScheduledMessage({
      id,
      chatId: owner.chatId,
      user: viewer,
      retentionMs: RETENTION_MS,
      doneKept: DONE_KEPT,
    });
    if (typeof result === 'object')
      throw result.refused === STATUS.NOT_OWNER
        ? forbidden(`scheduled message ${id} is not yours`)
        : notFound(`scheduled message ${id}`);
    return result === 'cancelled';
  }

  /** The viewer's scheduled messages in a chat they belong to: pending ones, then recently finished, by sendAt. */
  async list(viewer: string, input: { chatId: string }): Promise<ScheduledMessage[]> {
    const chatId = parseChatId(input);
    await this.chats.requireMember(viewer, { chatId });
    const ids = await this.commands.scheduledIds({ sender: viewer, chatId });
    const all = await Promise.all(ids.map((id) => this.get({ id })));
    return all.filter((m): m is ScheduledMessage => m !== null).sort((a, b) => a.sendAt.getTime() - b.sendAt.getTime());
  }

  /** Scheduled message `id`; null when there is none (never, or its record expired). */
  async get({ id }: { id: string }): Promise<ScheduledMessage | null> {
    const r = await this.commands.scheduledMessage({ id });
    return r && { id, ...r, status: statusOf(r.status) };
  }

  /** The worker's handler: sends scheduled message `id` unless it was cancelled or sent already. */
  async deliver({ id }: { id: string }): Promise<void> {
    const claimed = await this.commands.claimScheduledMessage({ id });
    if (claimed?.status !== 'SENDING') return;
    const { chatId, sender, text } = claimed;
    const finish = (outcome: { status: 'SENT'; value: number } | { status: 'FAILED'; value: string }) =>
      this.commands.finishScheduledMessage({
        id,
        chatId,
        sender,
        ...outcome,
        retentionMs: RETENTION_MS,
        doneKept: DONE_KEPT,
      });
    let messageId: number;
    try {
      messageId = await this.chats.sendScheduled(sender, { chatId, text, scheduledId: id });
    } catch (err) {
      // Refusals are final (the sender left, the chat is gone); anything else is retried by the queue.
      if (!AppError.is(err) || !['FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT'].includes(err.code)) throw err;
      // Notify first: a crash before finishing repeats the notice rather than losing it.
      await this.notifications.notify({
        user: sender,
        kind: 'scheduleFailed',
        text: `your message scheduled for chat ${chatId} was not sent: ${err.message}`,
        data: { chatId, scheduledId: id },
      });
      await finish({ status: 'FAILED', value: err.message });
      this.log.info({ scheduledId: id, chatId, sender, reason: err.message }, 'scheduled message failed');
      return;
    }
    await finish({ status: 'SENT', value: messageId });
  }
}

function checkId(id: string): string {
  if (!ID.test(id)) throw badInput('id', 'is not a scheduled message id');
  return id;
}
