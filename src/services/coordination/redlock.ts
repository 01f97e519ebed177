/**
 * RedLock (the Redlock algorithm of redis.io's distributed-locks page) over the independent Redis servers of
 * REDLOCK_NODES: a lock is held when a majority of them took its key within the lease; it is sure for the lease less
 * the time the attempt took and a clock drift allowance; it is freed on every server, or handed to a waiter of the
 * same process. A server that restarted counts
 * towards no majority until it has been up REDLOCK_MAX_LEASE_MS (it may have forgotten leases that still run). It
 * gives no fencing token. The periodic jobs lock with it when it is configured (`jobLocks`). Details, and what it does
 * not promise: docs/coordination.md.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { RedlockNode } from '../../redis/coordination/commands.js';
import { checkMs, checkName } from '../shared/arguments.js';
import { HANDOFF_MAX, LeaseLostError, type LockOptions } from './locks.js';

/** The locks the periodic jobs run under: the plain lock on the product's Redis, or RedLock (REDLOCK_NODES). */
export interface JobLocks {
  /**
   * Runs `fn` holding lock `name` (BUSY when it stays held for `waitMs`), keeping the lease alive; `fn`'s signal
   * aborts with a LeaseLostError when the lease is lost.
   */
  withLock<T>(options: LockOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export interface RedLease {
  readonly name: string;
  readonly token: string;
  /** Until when (performance.now()) the lock is sure: the lease, less the attempt's time and the drift allowance. */
  readonly validUntil: number;
}

/** Clock drift allowed for, as a fraction of the lease, plus DRIFT_MS for Redis's 1 ms expiry precision. */
export const DRIFT_FACTOR = 0.01;
const DRIFT_MS = 2;
/** A failed attempt waits RETRY_DELAY_MS ± RETRY_JITTER_MS before the next (the redlock package's defaults). */
export const RETRY_DELAY_MS = 200;
export const RETRY_JITTER_MS = 100;

/** A waiter of this process for a lock: its token and lease, and how to wake it (with a lease: handed over). */
interface Waiter {
  token: string;
  leaseMs: number;
  wake: (lease?: RedLease) => void;
}

/** This process's waiters of one lock, first come first served, and the hand-overs since its last release. */
interface Waiting {
  queue: Waiter[];
  handoffs: number;
}

/** What one server answered: took (or extended, or freed) the key, refused, or gave no answer (it may have done it). */
type Vote = 'yes' | 'no' | 'unknown';

export interface RedLockDeps {
  nodes: RedlockNode[];
  /** The longest lease granted (a longer one asked for is shortened to it); also how long a restarted server waits. */
  maxLeaseMs: number;
  log: Logger;
}

export class RedLock implements JobLocks {
  private readonly nodes: RedlockNode[];
  private readonly maxLeaseMs: number;
  private readonly log: Logger;
  private readonly waiting = new Map<string, Waiting>();
  /** Servers that must agree: a majority of all of them, whether they answer or not. */
  readonly quorum: number;

  constructor(deps: RedLockDeps) {
    ({ nodes: this.nodes, maxLeaseMs: this.maxLeaseMs, log: this.log } = deps);
    this.quorum = Math.floor(this.nodes.length / 2) + 1;
  }

  /**
   * Each server: how long it has been up (undefined while disconnected), and whether its yes counts now: it is
   * connected and has been up at least the longest lease. One that restarted (without persistence it forgot every
   * key) may be missing a lease that still runs: were its yes counted, a second holder could make a majority with it.
   */
  servers(): { upMs: number | undefined; counts: boolean }[] {
    return this.nodes.map((node) => {
      const upMs = node.uptimeMs();
      return { upMs, counts: upMs !== undefined && upMs >= this.maxLeaseMs };
    });
  }

  /** How many acquires of this process wait for lock `name` (a release hands it to the first). */
  waiters(name: string): number {
    return this.waiting.get(name)?.queue.length ?? 0;
  }

  /**
   * Takes the lock on a majority within the lease, trying again after a pause while `waitMs` lasts; null when it
   * stayed held. A lease longer than REDLOCK_MAX_LEASE_MS is shortened to it.
   */
  async acquire({ name, leaseMs, waitMs = 0 }: LockOptions): Promise<RedLease | null> {
    checkName('lock', name);
    checkMs('leaseMs', leaseMs, 1);
    checkMs('waitMs', waitMs, 0);
    const lease = Math.min(leaseMs, this.maxLeaseMs);
    const token = randomUUID(); // 122 random bits, from a cached pool of entropy (no syscall per lock)
    const deadline = performance.now() + waitMs;
    for (;;) {
      const start = performance.now();
      const votes = await this.ask((node) => node.acquire({ name, token, leaseMs: lease }));
      const validUntil = start + lease - drift(lease);
      if (this.agreed(votes) && validUntil > performance.now()) return { name, token, validUntil };
      // Free what this attempt took, on every server that may have it (a no holds another's token).
      await this.ask((node, i) => (votes[i] === 'no' ? Promise.resolve(false) : node.release({ name, token })));
      const pause = RETRY_DELAY_MS + (Math.random() * 2 - 1) * RETRY_JITTER_MS;
      if (performance.now() + pause > deadline) return null;
      const handed = await this.waitForTurn(name, { token, leaseMs: lease }, pause);
      if (handed) return handed;
    }
  }

  /**
   * Gives the lease `leaseMs` (at most REDLOCK_MAX_LEASE_MS) from now on a majority: the renewed lease; `ended`
   * when too many servers no longer hold it for a majority; `unconfirmed` when no majority answered yes (the lease
   * is then sure only until its previous `validUntil`).
   */
  async extend({ lease, leaseMs }: { lease: RedLease; leaseMs: number }): Promise<RedLease | 'ended' | 'unconfirmed'> {
    checkMs('leaseMs', leaseMs, 1);
    const length = Math.min(leaseMs, this.maxLeaseMs);
    const start = performance.now();
    const votes = await this.ask((node) => node.extend({ name: lease.name, token: lease.token, leaseMs: length }));
    const validUntil = start + length - drift(length);
    if (this.agreed(votes) && validUntil > performance.now()) return { ...lease, validUntil };
    return votes.filter((v) => v === 'no').length > this.nodes.length - this.quorum ? 'ended' : 'unconfirmed';
  }

  /**
   * Frees the lock on every server, or hands it to this process's first waiter (HANDOFF_MAX times in a row at most,
   * then a release lets other processes compete); true when a majority still held it (else it may have ended).
   */
  async release(lease: RedLease): Promise<boolean> {
    const { name, token } = lease;
    const entry = this.waiting.get(name);
    const waiter = entry && entry.handoffs < HANDOFF_MAX ? entry.queue.shift() : undefined;
    if (entry && waiter) {
      entry.handoffs++;
      return this.handOver(lease, waiter);
    }
    if (entry) entry.handoffs = 0;
    const votes = await this.ask((node) => node.release({ name, token }));
    entry?.queue.shift()?.wake(); // it tries again at once, beside the waiters of other processes
    return votes.filter((v) => v === 'yes').length >= this.quorum;
  }

  /**
   * Runs `fn` holding the lock (BUSY when it stays held for `waitMs`). The lease is extended on a majority every
   * third of it; when the lease is lost (a majority no longer holds it, or its validity ran out unconfirmed), `fn`'s
   * signal aborts with a LeaseLostError and `fn` should stop writing. Released on every server after.
   */
  async withLock<T>(options: LockOptions, fn: (signal: AbortSignal, lease: RedLease) => Promise<T>): Promise<T> {
    const { name } = options;
    const first = await this.acquire(options);
    if (!first) throw new AppError('BUSY', `lock "${name}" is held; try again later`);
    let lease = first;
    const controller = new AbortController();
    const lost = (why: string) => controller.abort(new LeaseLostError(`lost the RedLock lease "${name}": ${why}`));
    const keepAlive = setInterval(
      () => {
        if (performance.now() >= lease.validUntil) return lost('its validity ran out before a majority renewed it');
        this.extend({ lease, leaseMs: options.leaseMs }).then(
          (result) => {
            if (result === 'ended') lost('a majority of the servers no longer hold it');
            else if (result !== 'unconfirmed' && !controller.signal.aborted) lease = result;
          },
          (err: unknown) => this.log.warn({ lock: name, err }, 'RedLock extension failed; retrying'),
        );
      },
      Math.min(options.leaseMs, this.maxLeaseMs) / 3,
    );
    try {
      return await fn(controller.signal, first);
    } finally {
      clearInterval(keepAlive);
      await this.release(lease).catch((err: unknown) => this.log.warn({ lock: name, err }, 'RedLock release failed'));
    }
  }

  /**
   * Passes the lock to `waiter` on every server at once: the waiter's lease when a majority took it within the
   * lease (the same rule as an attempt), else both tokens are freed and the waiter tries again at once.
   */
  private async handOver(lease: RedLease, waiter: Waiter): Promise<boolean> {
    const { name, token } = lease;
    const { token: waiterToken, leaseMs } = waiter;
    const start = performance.now();
    const votes = await this.ask((node) => node.handOff({ name, token, waiterToken, leaseMs }));
    const validUntil = start + leaseMs - drift(leaseMs);
    const held = votes.filter((v) => v === 'yes').length >= this.quorum;
    if (this.agreed(votes) && validUntil > performance.now()) {
      waiter.wake({ name, token: waiterToken, validUntil });
      return held;
    }
    await this.ask(async (node, i) => {
      if (votes[i] === 'no') return false;
      const freed = await Promise.all([node.release({ name, token }), node.release({ name, token: waiterToken })]);
      return freed.includes(true);
    });
    waiter.wake();
    return held;
  }

  /** Waits up to `ms` among this process's waiters of lock `name`: a lease when the holder handed it over. */
  private waitForTurn(name: string, turn: Omit<Waiter, 'wake'>, ms: number): Promise<RedLease | undefined> {
    const entry = this.waiting.get(name) ?? { queue: [], handoffs: 0 };
    this.waiting.set(name, entry);
    return new Promise((resolve) => {
      const leave = () => {
        if (entry.queue.length === 0 && this.waiting.get(name) === entry) this.waiting.delete(name);
      };
      const waiter: Waiter = {
        ...turn,
        wake: (lease) => {
          clearTimeout(timer);
          leave();
          resolve(lease);
        },
      };
      const timer = setTimeout(() => {
        const i = entry.queue.indexOf(waiter);
        // Out of the queue: a release is handing it the lock, and wakes it either way (a lease must not be lost).
        if (i < 0) return;
        entry.queue.splice(i, 1);
        leave();
        resolve(undefined);
      }, ms);
      entry.queue.push(waiter);
    });
  }

  /** Asks every server at once; a server that throws (down, too slow) gave no answer. */
  private ask(question: (node: RedlockNode, i: number) => Promise<boolean>): Promise<Vote[]> {
    return Promise.all(
      this.nodes.map((node, i) =>
        question(node, i).then(
          (yes): Vote => (yes ? 'yes' : 'no'),
          (): Vote => 'unknown',
        ),
      ),
    );
  }

  /**
   * A majority of all servers said yes, counting only those that count once the answers are in: a server that
   * restarted while it was asked answered on a new connection, which reads the server's uptime before anything else.
   */
  private agreed(votes: Vote[]): boolean {
    const servers = this.servers();
    return votes.filter((v, i) => v === 'yes' && servers[i]!.counts).length >= this.quorum;
  }
}

/** The drift allowance of a lease: DRIFT_FACTOR of it, plus DRIFT_MS. */
function drift(leaseMs: number): number {
  return Math.round(leaseMs * DRIFT_FACTOR) + DRIFT_MS;
}
