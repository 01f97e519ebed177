/**
 * Read-write locks (Redisson's RReadWriteLock, seed 003): many readers or one writer. Each reader's lease ends on
 * its own; a writer that waits queues new readers behind it, so a stream of readers cannot starve it; every holder
 * gets the next fencing token. Waiters register in Redis with their failed attempt and wake on the lock's doorbell
 * (all of this process's at once: readers can go in together) or when what refused them ends. Details:
 * docs/coordination.md.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { CoordinationCommands } from '../../redis/coordination/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import { checkMs, checkName } from '../shared/arguments.js';
import { EXPIRY_JITTER_MS, holdWhile, WATCH_LINGER_MS, type Lease, type LockOptions } from './locks.js';

export type RwMode = 'read' | 'write';

export interface RwLease extends Lease {
  readonly mode: RwMode;
  /** Higher for every later holder of the lock, reader or writer (drawn by its take). */
  readonly fence: number;
}

export interface RwLockOptions extends LockOptions {
  mode: RwMode;
}

/** The waiters of one lock in this process; a ring wakes them all. */
interface Watch {
  waiters: Set<() => void>;
  /** How many times the watch fired: a waiter that saw it move while it was trying does not wait. */
  rings: number;
  unwatch: () => void;
  linger: NodeJS.Timeout | undefined;
}

export interface RwLockDeps {
  commands: CoordinationCommands;
  poller: MailboxPoller;
  log: Logger;
}

export class RwLockService {
  private readonly watches = new Map<string, Watch>();
  private readonly commands: CoordinationCommands;
  private readonly poller: MailboxPoller;
  private readonly log: Logger;

  constructor(deps: RwLockDeps) {
    ({ commands: this.commands, poller: this.poller, log: this.log } = deps);
  }

  /** Takes the lock in `mode`, waiting up to `waitMs`; null when it could not. */
  async acquire({ name, mode, leaseMs, waitMs = 0 }: RwLockOptions): Promise<RwLease | null> {
    checkName('lock', name);
    checkMs('leaseMs', leaseMs, 1);
    checkMs('waitMs', waitMs, 0);
    if (mode !== 'read' && mode !== 'write') throw new Error(`mode must be read or write`);
    const token = randomBytes(16).toString('base64url');
    const deadline = performance.now() + waitMs;
    for (;;) {
      const rings = this.watches.get(name)?.rings;
      const left = deadline - performance.now();
      const result = await this.commands.acquireRwLock({ name, mode, token, leaseMs, waitMs: Math.max(left, 0) });
      if (typeof result === 'object' && 'fence' in result) return { name, mode, token, fence: result.fence };
      if (deadline - performance.now() <= 0) return null;
      if (result === 'unconfirmed') continue; // given back; the attempt took the replicas' whole timeout
      const ms = Math.min(deadline - performance.now(), result.heldForMs + Math.random() * EXPIRY_JITTER_MS);
      await this.waitForRing(name, rings, ms);
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

  /**
   * Waits up to `ms` for a ring of the lock's watch. `rings` is what the waiter saw before its failed attempt: if
   * the watch fired since, the lock moved while it was trying and it goes again at once.
   */
  private waitForRing(name: string, rings: number | undefined, ms: number): Promise<void> {
    const watch = this.watches.get(name) ?? this.watch(name);
    if (rings !== undefined && watch.rings !== rings) return Promise.resolve();
    clearTimeout(watch.linger);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        watch.waiters.delete(wake);
        this.idle(name, watch);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      watch.waiters.add(wake);
    });
  }

  /** Watches the lock's head; its first read also fires, covering a release just before the watch. */
  private watch(name: string): Watch {
    const watch: Watch = { waiters: new Set(), rings: 0, unwatch: () => undefined, linger: undefined };
    watch.unwatch = this.poller.watch(this.commands.rwLockHead({ name }), () => {
      watch.rings++;
      for (const wake of [...watch.waiters]) wake();
    });
    this.watches.set(name, watch);
    return watch;
  }

  private idle(name: string, watch: Watch): void {
    if (watch.waiters.size > 0) return;
    clearTimeout(watch.linger);
    watch.linger = setTimeout(() => {
      if (watch.waiters.size > 0 || this.watches.get(name) !== watch) return;
      watch.unwatch();
      this.watches.delete(name);
    }, WATCH_LINGER_MS);
    watch.linger.unref();
  }
}
