/**
 * Notifications: the book's single-recipient mailbox, one per user on the user's slot. Each notification gets
 * the next id of the user's sequence; acknowledging up to an id deletes it and everything before it. The
 * mailbox keeps the newest INBOX_MAX. Adding one rings the user's doorbell so live subscriptions see it at once.
 */
import { badInput } from '../../errors.js';
import type { ChatCommands, StoredNotification } from '../../redis/chat/commands.js';
import { checkPage, type Page } from '../shared/paging.js';

/** What a notification tells; the schema describes each (schema/chat.ts). */
export const NOTIFICATION_KINDS = ['added', 'removed', 'gap', 'scheduleFailed', 'logProcessed'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface Notification extends StoredNotification {
  kind: NotificationKind;
}

export const INBOX_MAX = 1000;
/** A user's notifications, per read. */
export const NOTIFICATIONS_PAGE: Page = { default: 50, max: 1000 };

export class NotificationService {
  private readonly commands: ChatCommands;

  constructor(deps: { commands: ChatCommands }) {
    ({ commands: this.commands } = deps);
  }

  /** Puts a notification in `user`'s mailbox; its id. */
  notify(input: {
    user: string;
    kind: NotificationKind;
    text: string;
    data?: Record<string, unknown>;
  }): Promise<number> {
    return this.commands.notify({ ...input, data: input.data, cap: INBOX_MAX });
  }

  /** `viewer`'s unacknowledged notifications with an id above `after` (0: all of them), oldest first. */
  async list(viewer: string, { after = 0, first }: { after?: number; first: number }): Promise<Notification[]> {
    checkPage('first', first, NOTIFICATIONS_PAGE.max);
    if (first === 0) return [];
    // Only this service writes the mailbox, with kinds of NOTIFICATION_KINDS.
    return (await this.commands.notifications({ user: viewer, after, limit: first })) as Notification[];
  }

  /** Acknowledges every notification of `viewer` up to `upTo`; returns how many remain. */
  async ack(viewer: string, { upTo }: { upTo: number }): Promise<number> {
    if (!Number.isSafeInteger(upTo) || upTo < 0) throw badInput('upTo', 'must be a notification id (an integer ≥ 0)');
    return this.commands.ackNotifications({ user: viewer, upTo });
  }
}
