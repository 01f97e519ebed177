/**
 * Recent contacts (the book's chapter 6 autocomplete list): a list per user, newest first, at most CONTACTS_MAX.
 * Creating a chat with someone, adding them to a chat or sending them a message moves them to the front.
 * Filtering by prefix happens here, over at most CONTACTS_MAX short names, as in the book.
 */
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/chat/commands.js';
import type { ChatKeys } from '../../redis/chat/keys.js';
import { checkPage } from '../shared/paging.js';

export const CONTACTS_MAX = 100;

export class ContactService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ChatKeys,
  ) {}

  /** Moves `contacts` to the front of `username`'s list; the first of them ends up first. */
  async touch(username: string, contacts: readonly string[]): Promise<void> {
    const others = [...new Set(contacts)].filter((c) => c !== username).slice(0, CONTACTS_MAX);
    if (others.length === 0) return;
    await commands.touchContacts(this.redis, this.keys, { user: username, cap: CONTACTS_MAX, names: others.reverse() });
  }

  /** Contacts starting with `prefix` (case-insensitive), newest first, at most `first`. */
  async list(username: string, prefix: string, first: number): Promise<string[]> {
    checkPage('first', first, CONTACTS_MAX);
    if (first === 0) return [];
    const p = prefix.toLowerCase();
    const all = await this.redis.lrange(this.keys.user(username).contacts, 0, -1);
    return all.filter((c) => c.startsWith(p)).slice(0, first);
  }

  async remove(username: string, contact: string): Promise<boolean> {
    return (await this.redis.lrem(this.keys.user(username).contacts, 0, contact.trim().toLowerCase())) > 0;
  }
}
