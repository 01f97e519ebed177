/**
 * Recent contacts (the book's chapter 6 autocomplete list): a list per user, newest first, at most CONTACTS_MAX.
 * Creating a chat with someone, adding them to a chat or sending them a message moves them to the front.
 * Filtering by prefix happens here, over at most CONTACTS_MAX short names, as in the book.
 */
import type { ChatCommands } from '../../redis/chat/commands.js';
import { checkPage, type Page } from '../shared/paging.js';

export const CONTACTS_MAX = 100;
/** A user's contacts, per autocomplete. */
export const CONTACTS_PAGE: Page = { default: 10, max: CONTACTS_MAX };
/** The contacts' prefix by default: every contact. */
export const CONTACTS_PREFIX_DEFAULT = '';

export class ContactService {
  private readonly commands: ChatCommands;

  constructor(deps: { commands: ChatCommands }) {
    ({ commands: this.commands } = deps);
  }

  /** Moves `contacts` to the front of `user`'s list; the first of them ends up first. */
  async touch(user: string, { contacts }: { contacts: readonly string[] }): Promise<void> {
    const others = [...new Set(contacts)].filter((c) => c !== user).slice(0, CONTACTS_MAX);
    if (others.length === 0) return;
    await this.commands.touchContacts({ user, cap: CONTACTS_MAX, names: others.reverse() });
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
    return this.commands.removeContact({ user: viewer, contact: username.trim().toLowerCase() });
  }
}
