/**
 * Rate limits held across every gateway process (rate-limiter-flexible, fixed windows of a minute in Redis): failed
 * sign-ins per address and username, sign-ups per address, operations per user or anonymous address; past a limit,
 * BUSY with `retryAfter`. Operations take quota in batches, so they usually cost no round trip (docs/operations.md).
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { RateLimiterRes, type RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../../errors.js';
import type { OpsCommands } from '../../redis/ops/commands.js';

const WINDOW_SECONDS = 60;
/** Operations a process takes from Redis at once (at most a hundredth of the limit). */
const BATCH_MAX = 50;
/** Users (and addresses) whose quota a process holds at once; the least recently seen go first. */
const BUCKETS_MAX = 10_000;

/** The rate limits, by the name /metrics and gatewayFigures give them, each with the setting of its quota. */
export const RATE_LIMITS = {
  operations: 'RATE_LIMIT_PER_MINUTE',
  signin: 'SIGNIN_FAILURES_PER_MINUTE',
  signup: 'SIGNUPS_PER_MINUTE',
} as const;
export type RateLimitName = keyof typeof RATE_LIMITS;

export interface LimitOptions {
  /** Failed sign-ins per address and username a minute; 0 = no limit. */
  signInFailures: number;
  /** Sign-ups per address a minute; 0 = no limit. */
  signUps: number;
  /** Operations per user (or anonymous address) a minute; 0 = no limit. */
  operations: number;
}

const retryAfterOf = (msBeforeNext: number) => Math.max(1, Math.ceil(msBeforeNext / 1000));

function busy(what: string, msBeforeNext: number): AppError {
  const retryAfter = retryAfterOf(msBeforeNext);
  return new AppError('BUSY', `too many ${what}; retry in ${retryAfter} s`, { retryAfter });
}

/** A process's share of one user's quota for the current window. */
interface Bucket {
  tokens: number;
  resetAt: number;
  /** The window has nothing left in Redis: once `tokens` are used, refuse until `resetAt`. */
  exhausted: boolean;
  refilling?: Promise<void>;
  /** The last refusal given from this bucket: the next one reuses it while its seconds to wait are the same. */
  refusal?: AppError;
}

export interface RateLimitDeps {
  commands: OpsCommands;
  options: LimitOptions;
  log: Logger;
}

export class RateLimits {
  private readonly signIns: RateLimiterRedis | undefined;
  private readonly signUps: RateLimiterRedis | undefined;
  private readonly operations: RateLimiterRedis | undefined;
  private readonly batch: number;
  private readonly buckets = new LRUCache<string, Bucket>({ max: BUCKETS_MAX });
  private lastError = '';
  private readonly options: LimitOptions;
  private readonly log: Logger;

  constructor({ commands, options, log }: RateLimitDeps) {
    this.options = options;
    this.log = log;
    const limiter = (name: string, points: number) =>
      points > 0 ? commands.rateLimiter({ name, points, durationSeconds: WINDOW_SECONDS }) : undefined;
    this.signIns = limiter('signin', options.signInFailures);
    this.signUps = limiter('signup', options.signUps);
    this.operations = limiter('ops', options.operations);
    this.batch = Math.max(1, Math.min(BATCH_MAX, Math.floor(options.operations / 100)));
  }

  /** Whether operations are limited at all (no limit: nothing to check per operation). */
  get limitsOperations(): boolean {
    return this.operations !== undefined;
  }

  /**
   * Counts a sign-in attempt of `username` from `address` before the password is checked (so concurrent guesses
   * count too); BUSY past the limit. Call the returned function when the password was right: a success is no failure.
   */
  async signInAttempt({ address, username }: { address: string; username: string }): Promise<() => Promise<void>> {
    const limiter = this.signIns;
    if (!limiter) return () => Promise.resolve();
    const key = `${address}|${username}`;
    await limiter.consume(key).catch((rejection: unknown) => {
      throw rejection instanceof RateLimiterRes ? busy('failed sign-ins', rejection.msBeforeNext) : rejection;
    });
    return async () => void (await limiter.reward(key));
  }

  /** Counts a sign-up from `address`; BUSY past the limit. */
  async signUp({ address }: { address: string }): Promise<void> {
    await this.signUps?.consume(address).catch((rejection: unknown) => {
      throw rejection instanceof RateLimiterRes ? busy('sign-ups', rejection.msBeforeNext) : rejection;
    });
  }

  /**
   * Takes one operation of `who` (a user or an address): undefined when it may run, BUSY when over the limit; a
   * promise only when this process must take a new batch from Redis. With Redis away, operations run (they fail
   * on their own if they need it).
   */
  operation({ who }: { who: string }): AppError | undefined | Promise<AppError | undefined> {
    if (!this.operations) return undefined;
    const bucket = this.buckets.get(who);
    const now = Date.now();
    if (bucket && now < bucket.resetAt) {
      if (bucket.tokens > 0) {
        bucket.tokens--;
        return undefined;
      }
      if (bucket.exhausted) {
        // A refused caller usually asks again at once: one error per second to wait, not one per refusal.
        const last = bucket.refusal;
        if (last?.extensions.retryAfter === retryAfterOf(bucket.resetAt - now)) return last;
        return (bucket.refusal = busy('operations', bucket.resetAt - now));
      }
    }
    return this.refill(who).then(() => this.operation({ who }));
  }

  /** Takes a batch of `who`'s quota from Redis (one refill at a time per user). */
  private refill(who: string): Promise<void> {
    const current = this.buckets.get(who);
    if (current?.refilling) return current.refilling;
    const limiter = this.operations!;
    const refilling = limiter.consume(who, this.batch).then(
      (res) => this.buckets.set(who, { tokens: this.batch, resetAt: Date.now() + res.msBeforeNext, exhausted: false }),
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) {
          // Redis away: let this operation run, and ask again next time.
          this.warn(rejection);
          this.buckets.set(who, { tokens: 1, resetAt: Date.now() + 1000, exhausted: false });
          return;
        }
        // The window had less than a batch left: what was left is ours (INCRBY is atomic), the rest is nobody's.
        const left = Math.max(
          0,
          Math.min(this.batch, this.options.operations - (rejection.consumedPoints - this.batch)),
        );
        this.buckets.set(who, { tokens: left, resetAt: Date.now() + rejection.msBeforeNext, exhausted: true });
      },
    );
    const placeholder: Bucket = { tokens: 0, resetAt: 0, exhausted: false, refilling: refilling.then(() => undefined) };
    this.buckets.set(who, placeholder);
    return placeholder.refilling!;
  }

  private warn(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== this.lastError) this.log.warn({ err }, 'rate limit check failed; letting operations run');
    this.lastError = message;
  }
}
