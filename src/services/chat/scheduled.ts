/**
 * Scheduled messages (API.md, "Scheduled work"): a record and the task that sends it are written by one script,
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
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/chat/commands.js';
import type { ChatKeys } from '../../redis/chat/keys.js';
import { STATUS } from '../../redis/status.js';
import type { CoordinationKeys } from '../../redis/coordination/keys.js';
import type { ChatService } from './chats.js';
import type { NotificationService } from './notifications.js';
import type { QueueService } from '../coordination/queues.js';

export type ScheduledStatus = 'PENDING' | 'SENT' | 'CANCELLED' | 'FAILED';

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

export class ScheduledMessageService {
  private readonly k: ReturnType<ChatKeys['scheduled']>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ChatKeys & CoordinationKeys,
    private readonly chats: ChatService,
    private readonly queues: QueueService,
    private readonly notifications: NotificationService,
    private readonly log: Logger,
  ) {
    this.k = keys.scheduled();
  }

  get queueName(): string {
    return this.k.queueName;
  }

  async scheduleMessage(sender: string, chatId: string, rawText: string, sendAt: Date): Promise<ScheduledMessage> {
    const text = this.chats.checkText(rawText, 'text');
    const at = sendAt.getTime();
    if (!Number.isFinite(at)) throw badInput('sendAt', 'must be a date and time');
    if (at - Date.now() > AHEAD_MAX_MS) throw badInput('sendAt', 'must be at most 366 days ahead');
    await this.chats.requireMember(chatId, sender);
    const id = randomBytes(12).toString('base64url');
    const task = this.queues.newTask({ name: SEND_SCHEDULED_MESSAGE, args: { id } });
    const created = await commands.scheduleMessage(this.redis, this.keys, {
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
    const message = await this.get(id);
    if (!message) throw new Error(`scheduled message ${id} vanished after it was created`);
    return message;
  }

  /** Cancels the viewer's pending scheduled message; false when it is too late (sending or sent already). */
  async cancelScheduledMessage(viewer: string, id: string): Promise<boolean> {
    const [chatId, sender] = await this.redis.hmget(this.k.record(checkId(id)), 'chatId', 'sender');
    if (!chatId || !sender) throw notFound(`scheduled message ${id}`);
    if (sender !== viewer) throw forbidden(`scheduled message ${id} is not yours`);
    const result = await commands.cancelScheduledMessage(this.redis, this.keys, {
      id,
      chatId,
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
  async list(viewer: string, chatId: string): Promise<ScheduledMessage[]> {
    await this.chats.requireMember(chatId, viewer);
    const [pending, done] = await Promise.all([
      this.redis.zrange(this.k.pending(viewer, chatId), '0', '-1'),
      this.redis.zrange(this.k.done(viewer, chatId), '0', '-1'),
    ]);
    const all = await Promise.all([...pending, ...done].map((id) => this.get(id)));
    return all.filter((m): m is ScheduledMessage => m !== null).sort((a, b) => a.sendAt.getTime() - b.sendAt.getTime());
  }

  async get(id: string): Promise<ScheduledMessage | null> {
    const r = await this.redis.hgetall(this.k.record(id));
    if (!r.chatId || !r.sender || r.text === undefined || !r.sendAt || !r.status) return null;
    return {
      id,
      chatId: r.chatId,
      sender: r.sender,
      text: r.text,
      sendAt: new Date(Number(r.sendAt)),
      // SENDING is internal: to the user it is still pending until it is sent.
      status: (r.status === 'SENDING' ? 'PENDING' : r.status) as ScheduledStatus,
      messageId: r.messageId ? Number(r.messageId) : null,
      reason: r.reason ?? null,
    };
  }

  /** The worker's handler: sends scheduled message `id` unless it was cancelled or sent already. */
  async deliver(id: string): Promise<void> {
    const claimed = await commands.claimScheduledMessage(this.redis, this.keys, { id });
    if (claimed?.status !== 'SENDING') return;
    const { chatId, sender, text } = claimed;
    const finish = (status: 'SENT' | 'FAILED', value: string | number) =>
      commands.finishScheduledMessage(this.redis, this.keys, {
        id,
        chatId,
        sender,
        status,
        value,
        retentionMs: RETENTION_MS,
        doneKept: DONE_KEPT,
      });
    let messageId: number;
    try {
      messageId = await this.chats.sendScheduled(chatId, sender, text, id);
    } catch (err) {
      // Refusals are final (the sender left, the chat is gone); anything else is retried by the queue.
      if (!AppError.is(err) || !['FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT'].includes(err.code)) throw err;
      // Notify first: a crash before finishing repeats the notice rather than losing it.
      await this.notifications.notify(
        sender,
        'scheduleFailed',
        `your message scheduled for chat ${chatId} was not sent: ${err.message}`,
        { chatId, scheduledId: id },
      );
      await finish('FAILED', err.message);
      this.log.info({ scheduledId: id, chatId, sender, reason: err.message }, 'scheduled message failed');
      return;
    }
    await finish('SENT', messageId);
  }
}

function checkId(id: string): string {
  if (!ID.test(id)) throw badInput('id', 'is not a scheduled message id');
  return id;
}
