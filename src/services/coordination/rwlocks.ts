/**
 * Read-write locks (Redisson's RReadWriteLock, seed 003): many readers or one writer. Each reader's lease ends on
 * its own; a writer that waits queues new readers behind it, so a stream of readers cannot starve it; every holder
 * gets the next fencing token. Waiters register in Redis with their failed attempt and wake on the lock's doorbell
 * (all of this process's at once: readers can go in together) or when what refused them ends. Details:
 * docs/coordination.md.
 */
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { CoordinationCommands } from '../../redis/coordination/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import { checkMs } from '../shared/arguments.js';
import { beginAcquire, EXPIRY_JITTER_MS, LockWaits, type Waiter } from './lock-waits.js';
import { holdWhile, type Lease, type LockOptions } from './locks.js';

export type RwMode = 'read' | 'write';

export interface RwLease extends Lease {
  readonly mode: RwMode;
  /** Higher for every later holder of the lock, reader or writer (drawn by its take). */
  readonly fence: number;
}

export interface RwLockOptions extends LockOptions {
  mode: RwMode;
}

export interface RwLockDeps {
  commands: CoordinationCommands;
  poller: MailboxPoller;
  log: Logger;
}

export class RwLockService {
  /** A ring wakes every waiter of this process: readers can go in together. */
  private readonly waits: LockWaits<Waiter<never>>;
  private readonly commands: CoordinationCommands;
  private readonly log: Logger;

  constructor(deps: RwLockDeps) {
    ({ commands: this.commands, log: this.log } = deps);
    this.waits = new LockWaits({
      poller: deps.poller,
      head: (name) => this.commands.rwLockHead({ name }),
      wakeAll: true,
    });
  }

  /** Takes the lock in `mode`, waiting up to `waitMs`; null when it could not. */
  async acquire({ name, mode, leaseMs, waitMs = 0 }: RwLockOptions): Promise<RwLease | null> {
    const { token, deadline } = beginAcquire({ name, leaseMs, waitMs });
    if (mode !== 'read' && mode !== 'write') throw new Error(`mode must be read or write`);
    for (;;) {
      const rings = this.waits.get(name)?.rings;
      const left = deadline - performance.now();
      const result = await this.commands.acquireRwLock({ name, mode, token, leaseMs, waitMs: Math.max(left, 0) });
      if (typeof result === 'object' && 'fence' in result) return { name, mode, token, fence: result.fence };
      if (deadline - performance.now() <= 0) return null;
      if (result === 'unconfirmed') continue; // given back; the attempt took the replicas' whole timeout
      const ms = Math.min(deadline - performance.now(), result.heldForMs + Math.random() * EXPIRY_JITTER_MS);
      await this.waits.wait({ name, rings, ms }, {});
    }
  }

  /** Ends the lease; false when it had already ended. */
  release(lease: RwLease): Promise<boolean> {
    return this.commands.releaseRwLock({ name: lease.name, mode: lease.mode, token: lease.token });
  }

  /** Gives the lease `leaseMs` from now: as LockService.extend. */
  extend({ lease, leaseMs }: { lease: RwLease; leaseMs: number }): Promise<'extended' | 'ended' | 'unconfirmed'> {
    checkMs('leaseMs', leaseMs, 1);
    return this.commands.extendRwLock({ name: lease.name, mode: lease.mode, token: lease.token, leaseMs });
  }

  /**
   * Runs `fn` holding the lock in `mode` (BUSY when it could not be taken within `waitMs`), as LockService.withLock:
   * the lease is extended while `fn` runs, and `fn`'s signal aborts with a LeaseLostError when it is lost.
   */
  async withLock<T>(options: RwLockOptions, fn: (signal: AbortSignal, lease: RwLease) => Promise<T>): Promise<T> {
    const { name, leaseMs, mode } = options;
    const lease = await this.acquire(options);
    if (!lease) throw new AppError('BUSY', `lock "${name}" is held (${mode === 'read' ? 'by a writer' : 'by others'})`);
    const hold = {
      name,
      leaseMs,
      extend: () => this.extend({ lease, leaseMs }),
      release: () => this.release(lease),
      log: this.log,
    };
    return holdWhile(hold, (signal) => fn(signal, lease));
  }
}
