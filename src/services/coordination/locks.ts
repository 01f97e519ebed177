/**
 * Distributed locks (the book's chapter 6, without its defects): SET NX PX with a random token; a holder that writes
 * somewhere the lock guards takes a fencing token (`fence`, higher for every later holder that asks); release and
 * extend compare the token in Lua; a refused acquire registers its waiter on the
 * lock and a release rings the lock's doorbell only then; waiters wake on a ring or when the lease runs out; a holder
 * hands over to a waiter of its own process in one script; `withLock` keeps the lease alive.
 * Details: docs/coordination.md.
 */
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import { checkMs } from '../shared/arguments.js';
import type { CoordinationCommands } from '../../redis/coordination/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import { beginAcquire, EXPIRY_JITTER_MS, LockWaits, type Waiting } from './lock-waits.js';

export interface Lease {
  readonly name: string;
  readonly token: string;
}

export interface LockOptions {
  name: string;
  /** How long the lease lasts unless extended (ms). */
  leaseMs: number;
  /** How long to wait for the lock (ms); 0 tries once. */
  waitMs?: number;
}

/** The lease was lost while `withLock`'s function ran (it expired, or Redis was unreachable until it would have). */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/** Hand-overs within a process in a row before a release lets other processes compete. */
export const HANDOFF_MAX = 8;

interface Waiter {
  token: string;
  leaseMs: number;
  /** With a lease: handed over. Without: try again. */
  wake: (lease?: Lease) => void;
}

/** How a held lease is kept alive: its lock's name (for messages), its length, and the steps on it. */
export interface Hold {
  name: string;
  leaseMs: number;
  /** Gives the lease `leaseMs` from now (see LockService.extend). */
  extend: () => Promise<'extended' | 'ended' | 'unconfirmed'>;
  release: () => Promise<unknown>;
  log: Logger;
}

/**
 * Runs `fn` holding a lease taken just before: the lease is extended every third of `leaseMs`; when it is lost,
 * `fn`'s signal aborts with a LeaseLostError and `fn` should stop writing. The lease is released after `fn` (unless
 * lost).
 */
export async function holdWhile<T>(hold: Hold, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const { name, leaseMs, log } = hold;
  const controller = new AbortController();
  const lost = (why: string) => controller.abort(new LeaseLostError(`lost the lease of lock "${name}": ${why}`));
  let expiresAt = performance.now() + leaseMs;
  let unconfirmed = false; // the last extension reached Redis but not enough replicas
  const keepAlive = setInterval(() => {
    if (performance.now() >= expiresAt)
      return lost(`it ran out while ${unconfirmed ? 'no replica confirmed its extensions' : 'Redis was out of reach'}`);
    const sentAt = performance.now();
    hold.extend().then(
      (result) => {
        unconfirmed = result === 'unconfirmed';
        if (result === 'extended') expiresAt = sentAt + leaseMs;
        else if (result === 'ended') lost('it had expired');
      },
      (err: unknown) => log.warn({ lock: name, err }, 'lock lease extension failed; retrying'),
    );
  }, leaseMs / 3);
  try {
    return await fn(controller.signal);
  } finally {
    clearInterval(keepAlive);
    if (!controller.signal.aborted) {
      // When this fails, the lease runs out on its own.
      await hold.release().catch((err: unknown) => log.warn({ lock: name, err }, 'lock release failed'));
    }
  }
}

export interface LockDeps {
  commands: CoordinationCommands;
  poller: MailboxPoller;
  log: Logger;
}

export class LockService {
  private readonly waits: LockWaits<Waiter, Lease>;
  private readonly commands: CoordinationCommands;
  private readonly log: Logger;

  constructor(deps: LockDeps) {
    ({ commands: this.commands, log: this.log } = deps);
    this.waits = new LockWaits({ poller: deps.poller, head: (name) => this.commands.lockHead({ name }) });
  }

  /** Takes the lock, waiting up to `waitMs`; null when it stayed held. */
  async acquire({ name, leaseMs, waitMs = 0 }: LockOptions): Promise<Lease | null> {
    const { token, deadline } = beginAcquire({ name, leaseMs, waitMs });
    for (let first = true; ; first = false) {
      const entry = this.waits.get(name);
      const rings = entry?.rings;
      const sentAt = performance.now();
      if (waitMs > 0 && entry?.held && entry.held.endsAt > sentAt) {
        // Held by a lease of this process: queue for its hand-over (or, when it lets the lock go, a wake-up) without
        // asking Redis; the end of its lease is the backstop.
        const ms = Math.min(deadline - sentAt, entry.held.endsAt - sentAt + Math.random() * EXPIRY_JITTER_MS);
        const handed = await this.waits.wait({ name, rings: undefined, ms }, { token, leaseMs });
        if (handed) return handed;
        if (performance.now() >= deadline) return null;
        continue;
      }
      if (first && entry?.yielding && waitMs > 0) {
        // This process let the lock go to other processes' waiters after HANDOFF_MAX hand-overs: queue behind its
        // waiters instead of taking it back at once (a release's own re-acquire would always win).
        const handed = await this.waits.wait({ name, rings, ms: waitMs }, { token, leaseMs });
        if (handed) return handed;
        continue;
      }
      // Registered in the same step when refused, so the holder's release rings for this waiter; taken while
      // others here wait, the lock is marked for them (the ring that woke this waiter woke no other of this process).
      const result = await this.commands.acquireLock({
        name,
        token,
        leaseMs,
        waits: waitMs > 0,
        others: (entry?.queue.length ?? 0) > 0,
        first,
      });
      if (result === 'taken') {
        const waiting = this.waits.get(name);
        if (waiting) {
          waiting.yielding = false;
          waiting.held = { token, endsAt: sentAt + leaseMs };
        }
        return { name, token };
      }
      const left = deadline - performance.now();
      if (left <= 0 || result === 'held') return null;
      if (result === 'unconfirmed') continue; // given back; the attempt took the replicas' whole timeout
      const ms = Math.min(left, result.heldForMs + Math.random() * EXPIRY_JITTER_MS);
      const handed = await this.waits.wait({ name, rings, ms }, { token, leaseMs });
      if (handed) return handed;
    }
  }

  /**
   * Frees the lock, or hands it to this process's first waiter; false when the lease had already ended (then
   * someone else may hold it).
   */
  release(lease: Lease): Promise<boolean> {
    const entry = this.waits.get(lease.name);
    if (!entry) return this.commands.releaseLock(lease).then((released) => released !== 0);
    if (entry.held?.token === lease.token) entry.held = undefined;
    const waiter = entry.handoffs < HANDOFF_MAX ? entry.queue.shift() : undefined;
    if (waiter) {
      entry.handoffs++;
      return this.handOff(lease, waiter, entry);
    }
    entry.handoffs = 0;
    entry.yielding = entry.queue.length > 0; // waiters here: until one of them takes it, let the others in
    return this.commands.releaseLock(lease).then((released) => {
      // Rung (2): the doorbell wakes this process's first waiter with the other processes'. Freed without a ring (1):
      // no waiter registered in Redis, so none elsewhere; the waiters here that queued for a hand-over (which do not
      // register) would wait for the lease's end: the first tries at once.
      if (released === 1) entry.queue.shift()?.wake();
      return released !== 0;
    });
  }

  /** Hands the lock from `lease` to `waiter` (of this process); false when the lease had already ended. */
  private async handOff(lease: Lease, waiter: Waiter, entry: Waiting<Waiter>): Promise<boolean> {
    const held = { token: waiter.token, endsAt: performance.now() + waiter.leaseMs };
    // Still held by this process while the hand-over runs: waiters that come meanwhile queue for the next one.
    entry.held = held;
    let handed: 'handed' | 'ended' | 'unconfirmed' = 'ended';
    try {
      handed = await this.commands.handOffLock({
        name: lease.name,
        token: lease.token,
        waiterToken: waiter.token,
        leaseMs: waiter.leaseMs,
      });
    } finally {
      if (handed !== 'handed' && entry.held === held) entry.held = undefined;
      waiter.wake(handed === 'handed' ? { name: lease.name, token: waiter.token } : undefined);
    }
    return handed !== 'ended'; // given back when unconfirmed: the waiter tries again
  }

  /**
   * A fencing token for what the holder of `lease` writes while it holds it: higher than any a holder of the lock
   * got before, so that storage which keeps the highest it saw refuses a holder that paused past its lease. Null
   * when the lease had ended, or when the replicas of REDIS_WAIT_REPLICAS did not confirm the token in time.
   */
  async fence(lease: Lease): Promise<number | null> {
    const fence = await this.commands.fenceLock({ name: lease.name, token: lease.token });
    return typeof fence === 'number' && fence > 0 ? fence : null;
  }

  /**
   * Gives the lease `leaseMs` from now: `extended`; `ended` when it had already ended; `unconfirmed` when the
   * replicas of REDIS_WAIT_REPLICAS did not confirm it in time (then it is sure only until its previous end).
   */
  async extend({ lease, leaseMs }: { lease: Lease; leaseMs: number }): Promise<'extended' | 'ended' | 'unconfirmed'> {
    checkMs('leaseMs', leaseMs, 1);
    const sentAt = performance.now();
    const result = await this.commands.extendLock({ name: lease.name, token: lease.token, leaseMs });
    const held = this.waits.get(lease.name)?.held;
    if (held?.token === lease.token && result !== 'unconfirmed')
      held.endsAt = result === 'ended' ? 0 : sentAt + leaseMs;
    return result;
  }

  /**
   * Runs `fn` holding the lock (BUSY when it stays held for `waitMs`). The lease is extended every third of
   * `leaseMs`; when it is lost, `fn`'s signal aborts with a LeaseLostError and `fn` should stop writing.
   */
  async withLock<T>(options: LockOptions, fn: (signal: AbortSignal, lease: Lease) => Promise<T>): Promise<T> {
    const { name, leaseMs } = options;
    const lease = await this.acquire(options);
    if (!lease) throw new AppError('BUSY', `lock "${name}" is held; try again later`);
    const hold: Hold = {
      name,
      leaseMs,
      extend: () => this.extend({ lease, leaseMs }),
      release: () => this.release(lease),
      log: this.log,
    };
    return holdWhile(hold, (signal) => fn(signal, lease));
  }
}
