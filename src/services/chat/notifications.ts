/**
 * Notifications: the book's single-recipient mailbox, one per user on the user's slot. Each notification gets
 * the next id of the user's sequence; acknowledging up to an id deletes it and everything before it. The
 * mailbox keeps the newest INBOX_MAX. Adding one rings the user's doorbell so live subscriptions see it at once.
 */
import { badInput } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/chat/commands.js';
import type { ChatKeys } from '../../redis/chat/keys.js';
import { checkPage } from '../shared/paging.js';

export interface Notification {
  id: number;
  kind: NotificationKind;
  text: string;
  data: Record<string, unknown> | null;
  createdAt: Date;
}

/** added / removed: chat membership by someone else; gap: unread chat messages dropped by the backlog bound. */
export type NotificationKind = 'added' | 'removed' | 'gap' | 'scheduleFailed' | 'logProcessed';

export const INBOX_MAX = 1000;
export const NOTIFICATIONS_PAGE_MAX = 1000;

export class NotificationService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ChatKeys,
  ) {}

  notify(username: string, kind: NotificationKind, text: string, data?: Record<string, unknown>): Promise<number> {
    return commands.notify(this.redis, this.keys, { user: username, kind, text, data, cap: INBOX_MAX });
  }

  /** Unacknowledged notifications with an id above `after`, oldest first. */
  async list(username: string, after: number, first: number): Promise<Notification[]> {
    checkPage('first', first, NOTIFICATIONS_PAGE_MAX);
    if (first === 0) return [];
    const rows = await this.redis.zrangebyscore(this.keys.user(username).inbox, `(${after}`, '+inf', 'LIMIT', 0, first);
    return rows.map(parseNotification);
  }

  /** Acknowledges every notification up to `upTo`; returns how many remain. */
  async ack(username: string, upTo: number): Promise<number> {
    if (!Number.isSafeInteger(upTo) || upTo < 0) throw badInput('upTo', 'must be a notification id (an integer ≥ 0)');
    const inbox = this.keys.user(username).inbox;
    const results = await this.redis.multi().zremrangebyscore(inbox, '-inf', upTo).zcard(inbox).exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error('acknowledgement transaction aborted');
    return results[1]![1] as number;
  }

  /** What a live subscription watches: the head key that moves with each notification, and its doorbell. */
  head(username: string): { key: string; channel: string } {
    const k = this.keys.user(username);
    return { key: k.inboxSeq, channel: k.bell };
  }
}

function parseNotification(json: string): Notification {
  const raw = JSON.parse(json) as {
    id: number;
    kind: NotificationKind;
    text: string;
    data?: Record<string, unknown>;
    createdAt: number;
  };
  return { id: raw.id, kind: raw.kind, text: raw.text, data: raw.data ?? null, createdAt: new Date(raw.createdAt) };
}
