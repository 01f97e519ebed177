/**
 * Reentrant locks (Redisson's RLock, seed 003): a lock held by an owner, which may take it again (a depth one
 * higher) and must leave it as many times before it is free. The lock is one string key with a lease
 * ("<owner> <token> <depth> <fence>", src/redis/lib/reentrant.lua); the fencing token changes only when the holder
 * changes. Waiters wait on the lock's doorbell with the end of the holder's lease as a backstop, and `withLock`
 * keeps the lease alive with a loss signal, both shared with the plain lock (lock-parts.ts). The store (which keys,
 * which scripts) is a parameter: the coordination domain's own (`reentrantStore`), or the documents' editing
 * leases, whose locks live in their document's shard and take only the waiting part (ReentrantTaker). Details:
 * docs/coordination.md.
 */
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { CoordinationCommands } from '../../redis/coordination/commands.js';
import type { ReentrantBusy, ReentrantHeld } from '../../redis/reentrant.js';
import type { Head, MailboxPoller } from '../mailbox/poller.js';
import { checkMs, checkName } from '../shared/arguments.js';
import { beginAcquire, EXPIRY_JITTER_MS, LockWaits, type Waiter } from './lock-waits.js';
import { holdWhile } from './locks.js';

export type { ReentrantBusy };

/** A reentrant lock as its holder has it (`depth`, `leftMs` and `fence` as of the step that returned it). */
export interface ReentrantLease extends ReentrantHeld {
  readonly name: string;
}

export interface ReentrantOptions {
  name: string;
  /** Who holds it: the same owner taking it again enters it once more. */
  owner: string;
  /** How long the lease lasts unless extended (ms); a re-entry never shortens it. */
  leaseMs: number;
  /** How long to wait for another owner to leave it (ms); 0 tries once. */
  waitMs?: number;
}

/**
 * How reentrant locks are taken where they live: each step one script of lib/reentrant.lua. `A` is what else an
 * acquire takes, and `R` what else it may answer (the documents' refusals: no such document, not its author).
 */
export interface ReentrantTakes<A extends object = object, R = never> {
  /** What waiters of lock `name` watch: its key and doorbell. */
  head(name: string): Head;
  acquire(
    a: A & { name: string; owner: string; token: string; leaseMs: number; waits: boolean; others: boolean },
  ): Promise<ReentrantHeld | ReentrantBusy | 'unconfirmed' | R>;
}

/** Where the coordination domain's reentrant locks live: taking them, and the steps of a holder. */
export interface ReentrantStore extends ReentrantTakes {
  /** The depth left (0: free), -1 when the lease had ended. */
  release(a: { name: string; token: string }): Promise<number>;
  extend(a: { name: string; token: string; leaseMs: number }): Promise<'extended' | 'ended' | 'unconfirmed'>;
}

/** The coordination domain's reentrant locks (keys `rlock:{name}`). */
export function reentrantStore(commands: CoordinationCommands): ReentrantStore {
  return {
    head: (name) => commands.reentrantHead({ name }),
    acquire: (a) => commands.acquireReentrant(a),
    release: (a) => commands.releaseReentrant(a),
    extend: (a) => commands.extendReentrant(a),
  };
}

/** Takes reentrant locks, waiting for other owners on the locks' doorbells (the lease's end as backstop). */
export class ReentrantTaker<A extends object = object, R = never> {
  private readonly takes: ReentrantTakes<A, R>;
  private readonly waits: LockWaits<Waiter<never>>;

  constructor(deps: { takes: ReentrantTakes<A, R>; poller: MailboxPoller }) {
    this.takes = deps.takes;
    this.waits = new LockWaits({ poller: deps.poller, head: (name) => this.takes.head(name) });
  }

  /**
   * Takes the lock for `owner`, or enters it once more when `owner` holds it, waiting up to `waitMs` for another
   * owner to leave it: the lease, or who holds it when the wait ran out (or the store's own refusal).
   */
  async acquire(options: ReentrantOptions & A): Promise<ReentrantLease | ReentrantBusy | R> {
    const { name, owner, leaseMs, waitMs = 0, ...rest } = options;
    checkName('lock owner', owner);
    const { token, deadline } = beginAcquire({ name, leaseMs, waitMs });
    for (;;) {
      const entry = this.waits.get(name);
      const rings = entry?.rings;
      const result = await this.takes.acquire({
        ...(rest as unknown as A),
        name,
        owner,
        token,
        leaseMs,
        waits: waitMs > 0,
        others: (entry?.queue.length ?? 0) > 0,
      });
      if (result === 'unconfirmed') {
        if (performance.now() < deadline) continue; // given back; the attempt took the replicas' whole timeout
        throw new AppError('BUSY', `lock "${name}": the replicas did not confirm it in time; try again later`);
      }
      if (!isBusy(result)) return isHeld(result) ? { name, ...result } : result;
      const left = deadline - performance.now();
      if (left <= 0) return result;
      await this.waits.wait(
        { name, rings, ms: Math.min(left, result.heldForMs + Math.random() * EXPIRY_JITTER_MS) },
        {},
      );
    }
  }
}

export class ReentrantLockService {
  private readonly store: ReentrantStore;
  private readonly taker: ReentrantTaker;
  private readonly log: Logger;

  constructor(deps: { store: ReentrantStore; poller: MailboxPoller; log: Logger }) {
    ({ store: this.store, log: this.log } = deps);
    this.taker = new ReentrantTaker<object, never>({ takes: this.store, poller: deps.poller });
  }

  /**
   * Takes the lock for `owner`, or enters it once more when `owner` holds it, waiting up to `waitMs` for another
   * owner to leave it: the lease, or who holds it when the wait ran out.
   */
  acquire(options: ReentrantOptions): Promise<ReentrantLease | ReentrantBusy> {
    return this.taker.acquire(options);
  }

  /** Leaves the lock once: the depth left (0: free, a waiter rung), -1 when the lease had already ended. */
  release(lease: { name: string; token: string }): Promise<number> {
    return this.store.release({ name: lease.name, token: lease.token });
  }

  /** Gives the lease `leaseMs` from now (as the plain lock's extend). */
  extend({ lease, leaseMs }: { lease: { name: string; token: string }; leaseMs: number }) {
    checkMs('leaseMs', leaseMs, 1);
    return this.store.extend({ name: lease.name, token: lease.token, leaseMs });
  }

  /**
   * Runs `fn` holding the lock (BUSY when another owner holds it for `waitMs`); `fn` may take it again. The lease
   * is extended every third of `leaseMs`; when it is lost, `fn`'s signal aborts with a LeaseLostError. Leaves it
   * once after `fn`.
   */
  async withLock<T>(
    options: ReentrantOptions,
    fn: (signal: AbortSignal, lease: ReentrantLease) => Promise<T>,
  ): Promise<T> {
    const { name, leaseMs } = options;
    const lease = await this.acquire(options);
    if (!isLease(lease))
      throw new AppError(
        'BUSY',
        `lock "${name}" is held${isBusy(lease) ? ` by ${lease.holder}` : ''}; try again later`,
      );
    const extend = () => this.extend({ lease, leaseMs });
    const release = () => this.release(lease);
    return holdWhile({ name, leaseMs, extend, release, log: this.log }, (signal) => fn(signal, lease));
  }
}

export function isBusy(result: unknown): result is ReentrantBusy {
  return typeof result === 'object' && result !== null && 'holder' in result && 'heldForMs' in result;
}

function isHeld(result: unknown): result is ReentrantHeld {
  return typeof result === 'object' && result !== null && 'token' in result && 'fence' in result;
}

export function isLease(result: unknown): result is ReentrantLease {
  return isHeld(result) && 'name' in result;
}
