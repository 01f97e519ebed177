/**
 * Recent contacts (the book's chapter 6 autocomplete list): a list per user, newest first, at most CONTACTS_MAX.
 * Creating a chat with someone, adding them to a chat or sending them a message moves them to the front.
 * Filtering by prefix happens here, over at most CONTACTS_MAX short names, as in the book.
 */
import { LRUCache } from 'lru-cache';
import type { ChatCommands } from '../../redis/chat/commands.js';
import { checkPage, type Page } from '../shared/paging.js';

export const CONTACTS_MAX = 100;
/** A user's contacts, per autocomplete. */
export const CONTACTS_PAGE: Page = { default: 10, max: CONTACTS_MAX };
/** The contacts' prefix by default: every contact. */
export const CONTACTS_PREFIX_DEFAULT = '';

/**
 * How long this process trusts that a move it made still heads a user's list: the same move within it (a burst of
 * messages to one chat) is not asked of Redis again. A move of the same user by another process meanwhile can leave
 * the list's head stale for up to this long.
 */
const MOVE_MEMO_MS = 5000;
/** Users whose last move is remembered so, per process. */
const MOVE_MEMO_MAX = 10_000;

export class ContactService {
  /** The last move made here, by user (the names as sent to Redis, joined). */
  private readonly lastMove = new LRUCache<string, string>({ max: MOVE_MEMO_MAX, ttl: MOVE_MEMO_MS });
  private readonly commands: ChatCommands;

  constructor(deps: { commands: ChatCommands }) {
    ({ commands: this.commands } = deps);
  }

  /** Moves `contacts` to the front of `user`'s list; the first of them ends up first. */
  async touch(user: string, { contacts }: { contacts: readonly string[] }): Promise<void> {
    const others = [...new Set(contacts)].filter((c) => c !== user).slice(0, CONTACTS_MAX);
    if (others.length === 0) return;
    const names = others.reverse();
    const move = names.join(',');
    if (this.lastMove.get(user) === move) return;
    this.lastMove.set(user, move); // before the round trip: concurrent sends of one burst make the move once
    try {
      await this.commands.touchContacts({ user, cap: CONTACTS_MAX, names });
    } catch (err) {
      this.lastMove.delete(user);
      throw err;
    }
  }

  /** `viewer`'s contacts starting with `prefix` (case-insensitive), newest first, at most `first`. */
  async list(viewer: string, { prefix, first }: { prefix: string; first: number }): Promise<string[]> {
    checkPage('first', first, CONTACTS_PAGE.max);
    if (first === 0) return [];
    const p = prefix.toLowerCase();
    const all = await this.commands.contacts({ user: viewer });
    return all.filter((c) => c.startsWith(p)).slice(0, first);
  }

  /** Removes `username` from `viewer`'s contacts; false when it was not there. */
  async remove(viewer: string, { username }: { username: string }): Promise<boolean> {
    this.lastMove.delete(viewer); // the next send moves its names again
    return this.commands.removeContact({ user: viewer, contact: username.trim().toLowerCase() });
  }
}
