/**
 * Counting semaphores that fail fast (the book's "busy, try later"). Each step is one Lua script on Redis's
 * clock, so no client clock decides who is in and nothing races between counting and taking a place (the book's
 * fair semaphore still did, across its two transactions). A holder that stops refreshing is dropped after its
 * timeout.
 */
import { randomBytes } from 'node:crypto';
import type { CoordinationCommands } from '../../redis/coordination/commands.js';
import { checkMs, checkName } from '../shared/arguments.js';

/** A holder's place in semaphore `name`. */
export interface Place {
  name: string;
  holder: string;
}

export class SemaphoreService {
  private readonly commands: CoordinationCommands;

  constructor(deps: { commands: CoordinationCommands }) {
    this.commands = deps.commands;
  }

  /**
   * Takes one of `limit` places for `timeoutMs` (unless refreshed); returns the holder id, or null when every
   * place is taken. A holder id already in keeps its place and is refreshed.
   */
  async acquire({
    name,
    limit,
    timeoutMs,
    holder = randomBytes(12).toString('base64url'),
  }: {
    name: string;
    limit: number;
    timeoutMs: number;
    holder?: string;
  }): Promise<string | null> {
    checkName('semaphore', name);
    checkMs('timeoutMs', timeoutMs, 1);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new Error(`semaphore limit must be an integer ≥ 1, got ${limit}`);
    return (await this.commands.acquireSemaphore({ name, limit, timeoutMs, holder })) ? holder : null;
  }

  /** Gives the holder `timeoutMs` from now; false when it had already been dropped. */
  async refresh({ name, holder, timeoutMs }: Place & { timeoutMs: number }): Promise<boolean> {
    checkMs('timeoutMs', timeoutMs, 1);
    return this.commands.refreshSemaphore({ name, timeoutMs, holder });
  }

  /** Gives the place back; false when the holder had already been dropped. */
  release(place: Place): Promise<boolean> {
    return this.commands.releaseSemaphore(place);
  }
}
