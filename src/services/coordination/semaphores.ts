/**
 * Counting semaphores that fail fast (the book's "busy, try later"). Each step is one Lua script on Redis's
 * clock, so no client clock decides who is in and nothing races between counting and taking a place (the book's
 * fair semaphore still did, across its two transactions). A holder that stops refreshing is dropped after its
 * timeout.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/coordination/commands.js';
import type { CoordinationKeys } from '../../redis/coordination/keys.js';
import { checkMs, checkName } from '../shared/arguments.js';

export class SemaphoreService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: CoordinationKeys,
  ) {}

  /**
   * Takes one of `limit` places for `timeoutMs` (unless refreshed); returns the holder id, or null when every
   * place is taken. A holder id already in keeps its place and is refreshed.
   */
  async acquire(
    name: string,
    limit: number,
    timeoutMs: number,
    holder = randomBytes(12).toString('base64url'),
  ): Promise<string | null> {
    checkName('semaphore', name);
    checkMs('timeoutMs', timeoutMs, 1);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new Error(`semaphore limit must be an integer ≥ 1, got ${limit}`);
    return (await commands.acquireSemaphore(this.redis, this.keys, { name, limit, timeoutMs, holder })) ? holder : null;
  }

  /** Gives the holder `timeoutMs` from now; false when it had already been dropped. */
  async refresh(name: string, holder: string, timeoutMs: number): Promise<boolean> {
    checkMs('timeoutMs', timeoutMs, 1);
    return commands.refreshSemaphore(this.redis, this.keys, { name, timeoutMs, holder });
  }

  /** Gives the place back; false when the holder had already been dropped. */
  async release(name: string, holder: string): Promise<boolean> {
    return (await this.redis.zrem(this.keys.semaphore(name), holder)) === 1;
  }
}
