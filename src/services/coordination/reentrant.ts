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
import type { ReentrantBusy, ReentrantEntry, ReentrantHeld, ReentrantTry } from '../../redis/reentrant.js';
import type { Head, MailboxPoller } from '../mailbox/poller.js';
import { checkMs, checkName } from '../shared/arguments.js';
import { beginAcquire, EXPIRY_JITTER_MS, LockWaits, type Waiter } from './lock-waits.js';
import { holdWhile } from './locks.js';

export type { ReentrantBusy };

/**
 * A reentrant lock as its holder has it (`depth` and `leftMs` as of the step that returned it); its fencing token
 * comes from ReentrantLockService.fence.
 */
export interface ReentrantLease extends ReentrantEntry {
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
 * How reentrant locks are taken where they live: each step one script of lib/reentrant.lua (or a first try without
 * one). `A` is what else an acquire takes, `R` what else it may answer (the documents' refusals: no such document,
 * not its author), and `H` what a holder gets (the documents' leases: with the fencing token drawn at the take).
 */
export interface ReentrantTakes<A extends object = object, R = never, H extends ReentrantEntry = ReentrantHeld> {
  /** What waiters of lock `name` watch: its key and doorbell. */
  head(name: string): Head;
  /** `first`: the acquire's first try. */
  acquire(a: A & ReentrantTry): Promise<H | ReentrantBusy | 'unconfirmed' | R>;
}

/** Where the coordination domain's reentrant locks live: taking them, and the steps of a holder. */
export interface ReentrantStore extends ReentrantTakes<object, never, ReentrantEntry> {
  /**
   * The depth left (0: free), -1 when the lease had ended. `last`: the holder as the caller knows it at depth 1 (its
   * fence, '0' until drawn), which the store may free by value first.
   */
  release(a: { name: string; token: string; last?: { owner: string; fence: string } | undefined }): Promise<number>;
  extend(a: { name: string; token: string; leaseMs: number }): Promise<'extended' | 'ended' | 'unconfirmed'>;
  /** Whether `token` holds the lock. */
  holds(a: { name: string; token: string }): Promise<boolean>;
  /** The holder's fencing token (drawn when first asked), 0 when the lease had ended. */
  fence(a: { name: string; token: string }): Promise<number | 'unconfirmed'>;
}

/** The coordination domain's reentrant locks (keys `rlock:{name}`). */
export function reentrantStore(commands: CoordinationCommands): ReentrantStore {
  return {
    head: (name) => commands.reentrantHead({ name }),
    acquire: (a) => commands.acquireReentrant(a),
    release: (a) => commands.releaseReentrant(a),
    extend: (a) => commands.extendReentrant(a),
    fence: (a) => commands.fenceReentrant(a),
    holds: (a) => commands.holdsReentrant(a),
  };
}

/** Takes reentrant locks, waiting for other owners on the locks' doorbells (the lease's end as backstop). */
export class ReentrantTaker<A extends object = object, R = never, H extends ReentrantEntry = ReentrantHeld> {
  private readonly takes: ReentrantTakes<A, R, H>;
  private readonly waits: LockWaits<Waiter<never>>;
  private readonly entered: ((name: string, held: H, sentAt: number) => void) | undefined;

  /** `entered`: told of every entry the store grants, with when its try was sent (performance.now()). */
  constructor(deps: {
    takes: ReentrantTakes<A, R, H>;
    poller: MailboxPoller;
    entered?: (name: string, held: H, sentAt: number) => void;
  }) {
    ({ takes: this.takes, entered: this.entered } = deps);
    this.waits = new LockWaits({ poller: deps.poller, head: (name) => this.takes.head(name) });
  }

  /**
   * Takes the lock for `owner`, or enters it once more when `owner` holds it, waiting up to `waitMs` for another
   * owner to leave it: the lease, or who holds it when the wait ran out (or the store's own refusal).
   */
  acquire(options: ReentrantOptions & A): Promise<Taken<H, R>> {
    const { name, owner, leaseMs, waitMs = 0 } = options;
    checkName('lock owner', owner);
    const { token, deadline } = beginAcquire({ name, leaseMs, waitMs });
    // One try object for the acquire (the options with the try's fields; a try is over before the next), and the
    // first try without the retries' async frame: most acquires end with it.
    const attempt: A & ReentrantTry = { ...options, token, waits: waitMs > 0, others: false, first: true };
    return this.step(attempt, deadline, false) as Promise<Taken<H, R>>;
  }

  /** The tries after the first, each after the wait the one before it ended with. */
  private async retry(attempt: A & ReentrantTry, deadline: number) {
    attempt.first = false;
    for (;;) {
      const result = await this.step(attempt, deadline, true);
      if (result !== AGAIN) return result;
    }
  }

  /**
   * One try: the acquire's answer, or, once it waited for the holder (or the replicas did not confirm it), the
   * retries' (the first try) or AGAIN (a retry: the retries go on).
   */
  private step(attempt: A & ReentrantTry, deadline: number, retrying: boolean): Promise<Taken<H, R> | typeof AGAIN> {
    const { name } = attempt;
    const entry = this.waits.get(name);
    const rings = entry?.rings;
    const sentAt = performance.now();
    attempt.others = (entry?.queue.length ?? 0) > 0;
    const again = (): Taken<H, R> | typeof AGAIN | Promise<Taken<H, R>> =>
      retrying ? AGAIN : this.retry(attempt, deadline);
    return this.takes.acquire(attempt).then((result) => {
      if (result === 'unconfirmed') {
        if (performance.now() < deadline) return again(); // given back; it took the replicas' timeout
        throw new AppError('BUSY', `lock "${name}": the replicas did not confirm it in time; try again later`);
      }
      if (!isBusy(result)) {
        if (!isHeld<H>(result)) return result;
        this.entered?.(name, result, sentAt);
        // The store's entry is made for this try: named, it is the lease (no copy).
        const lease = result as H & { name: string };
        lease.name = name;
        return lease;
      }
      const left = deadline - performance.now();
      if (left <= 0) return result;
      const ms = Math.min(left, result.heldForMs + Math.random() * EXPIRY_JITTER_MS);
      return this.waits.wait({ name, rings, ms }, {}).then(again);
    });
  }
}

/** What a retry that waited answers: the acquire tries again. */
const AGAIN = Symbol('again');

/** What an acquire of a ReentrantTaker answers. */
type Taken<H, R> = (H & { readonly name: string }) | ReentrantBusy | R;

/**
 * A re-entry in the process that holds the lock is counted here, without Redis, while the lease as this process
 * knows it has at least this share of the re-entry's `leaseMs` left (what withLock's extensions, every third of the
 * lease, always leave); with less, it goes to Redis, which lengthens the lease.
 */
export const LOCAL_REENTRY_LEFT = 2 / 3;

/** A reentrant lock this process holds for an owner (ReentrantLockService's local re-entries). */
interface Holding {
  owner: string;
  token: string;
  /** This process's entries that Redis counts in the lock's depth: the lock stays held while one is left. */
  remote: number;
  /** Entries counted only here, on top of the remote ones; releases leave these first. */
  local: number;
  /** The lock's depth in Redis as of the last step of this process that read it. */
  depth: number;
  /** The holder's fence as this process knows it ('0': not drawn), undefined when it does not. */
  fence: string | undefined;
  /** The earliest the lease can end (performance.now()): when its last take or extension was sent, plus its length. */
  endsAt: number;
}

export class ReentrantLockService {
  private readonly store: ReentrantStore;
  private readonly taker: ReentrantTaker<object, never, ReentrantEntry>;
  private readonly log: Logger;
  /** The locks this process holds, by name. */
  private readonly holdings = new Map<string, Holding>();

  constructor(deps: { store: ReentrantStore; poller: MailboxPoller; log: Logger }) {
    ({ store: this.store, log: this.log } = deps);
    const { store } = this;
    this.taker = new ReentrantTaker<object, never, ReentrantEntry>({
      poller: deps.poller,
      takes: {
        head: (name) => store.head(name),
        acquire: (a) => {
          // A lock this process holds is not free: no first try with SET NX (`a` is the taker's, made for this acquire).
          if (this.holdings.has(a.name)) a.first = false;
          return store.acquire(a);
        },
      },
      entered: (name, held, sentAt) => this.entered(name, held, sentAt),
    });
  }

  /**
   * Takes the lock for `owner`, or enters it once more when `owner` holds it, waiting up to `waitMs` for another
   * owner to leave it: the lease, or who holds it when the wait ran out. A re-entry while this process holds the lock
   * for `owner`, with at least LOCAL_REENTRY_LEFT of `leaseMs` left on the lease, is counted here (no round trip; the
   * lease keeps its end); any other goes to Redis.
   */
  acquire(options: ReentrantOptions): Promise<ReentrantLease | ReentrantBusy> {
    const { name, owner, leaseMs, waitMs = 0 } = options;
    const holding = this.holdings.get(name);
    if (holding?.owner === owner) {
      checkMs('leaseMs', leaseMs, 1);
      checkMs('waitMs', waitMs, 0);
      const leftMs = holding.endsAt - performance.now();
      if (leftMs >= leaseMs * LOCAL_REENTRY_LEFT) {
        holding.local++;
        const { token, depth, local } = holding;
        return Promise.resolve({ name, owner, token, depth: depth + local, leftMs: Math.floor(leftMs) });
      }
    }
    return this.taker.acquire(options);
  }

  /**
   * Leaves the lock once: the depth left (0: free, a waiter rung), -1 when the lease had already ended. Entries
   * counted here are left here (before the lease's earliest end without a round trip; after it, once a read of the
   * lock shows the lease still held); the last one of this process goes to Redis.
   */
  release(lease: { name: string; token: string }): Promise<number> {
    const { name, token } = lease;
    const holding = this.holdings.get(name);
    if (holding?.token === token) {
      if (holding.local > 0) {
        if (performance.now() < holding.endsAt) return Promise.resolve(holding.depth + --holding.local);
        return this.store.holds({ name, token }).then((held) => {
          if (!held) this.forget(name, token);
          return held ? holding.depth + --holding.local : -1;
        });
      }
      if (--holding.remote > 0)
        // Other entries of this process are left in Redis: keep the holding as Redis says.
        return this.store.release({ name, token }).then((left) => {
          if (left < 0) this.forget(name, token);
          else holding.depth = left;
          return left;
        });
      this.holdings.delete(name);
      // This process's last entry, and the lock at depth 1 as far as it knows: freed by its value, with the release by
      // token after it only when the value is another (another process's entry or fence, or a lease that ended).
      if (holding.depth === 1 && holding.fence !== undefined)
        return this.store.release({ name, token, last: { owner: holding.owner, fence: holding.fence } });
    }
    return this.store.release({ name, token });
  }

  /** Stops counting entries of lease `token` here: it ended. */
  private forget(name: string, token: string): void {
    if (this.holdings.get(name)?.token === token) this.holdings.delete(name);
  }

  /** Gives the lease `leaseMs` from now (as the plain lock's extend). */
  async extend({ lease, leaseMs }: { lease: { name: string; token: string }; leaseMs: number }) {
    checkMs('leaseMs', leaseMs, 1);
    const { name, token } = lease;
    const sentAt = performance.now();
    const result = await this.store.extend({ name, token, leaseMs });
    if (result === 'ended') this.forget(name, token);
    const holding = this.holdings.get(name);
    if (result === 'extended' && holding?.token === token) holding.endsAt = sentAt + leaseMs;
    return result;
  }

  /**
   * The fencing token of the holder of `lease`, for what it writes while it holds the lock: drawn the first time the
   * holder asks and the same while the same owner holds it (re-entries included), higher than any a holder of the
   * lock drew before. Null when the lease had ended, or when the replicas of REDIS_WAIT_REPLICAS did not confirm it
   * in time.
   */
  async fence(lease: { name: string; token: string }): Promise<number | null> {
    const fence = await this.store.fence({ name: lease.name, token: lease.token });
    const holding = this.holdings.get(lease.name);
    if (holding?.token === lease.token) holding.fence = typeof fence === 'number' ? String(fence) : undefined;
    return typeof fence === 'number' && fence > 0 ? fence : null;
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

  /** Counts an entry Redis granted this process (`sentAt`: when its step was sent). */
  private entered(name: string, entry: ReentrantEntry, sentAt: number): void {
    const holding = this.holdings.get(name);
    const endsAt = sentAt + entry.leftMs;
    if (holding?.token === entry.token) {
      holding.remote++;
      holding.depth = entry.depth;
      holding.endsAt = Math.max(holding.endsAt, endsAt);
    } else {
      // A new lease: any other this process had on the lock ended. Taken here at depth 1, its fence is 0 (drawn on
      // demand); entered at a greater depth, this process does not know it.
      const { owner, token, depth } = entry;
      const fence = depth === 1 ? '0' : undefined;
      this.holdings.set(name, { owner, token, remote: 1, local: 0, depth, fence, endsAt });
    }
  }
}

export function isBusy(result: unknown): result is ReentrantBusy {
  return typeof result === 'object' && result !== null && 'holder' in result && 'heldForMs' in result;
}

function isHeld<H extends ReentrantEntry>(result: unknown): result is H {
  return typeof result === 'object' && result !== null && 'token' in result && 'depth' in result;
}

export function isLease(result: unknown): result is ReentrantLease {
  return isHeld(result) && 'name' in result;
}
