/**
 * Editing leases on documents (seed 003's lock made visible, API.md "Editing leases"): a lease is a reentrant lock
 * (src/services/coordination/reentrant.ts, src/redis/lib/reentrant.lua) whose owner is the user and whose key lives
 * in the document's shard, so that indexDocument and deleteDocument check its token inside their own scripts. Its
 * author and admins may take it; the same user taking it again enters it once more (depth + 1); a wait rides on
 * the lease's doorbell (rung by the release) with the lease's end as backstop. Bounds: LEASES_PER_USER_MAX leases
 * per user (a counting semaphore per user whose holders are document ids), LEASE_WAITS_PER_USER_MAX waits per user
 * at once in each process, `seconds` 1-600 and `waitSeconds` 0-30.
 */
import { AppError, badInput, conflict, forbidden, notFound } from '../../errors.js';
import type { DocumentCommands, Shard } from '../../redis/documents/commands.js';
import type { ReentrantHeld } from '../../redis/reentrant.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';
import { isBusy, ReentrantTaker } from '../coordination/reentrant.js';
import type { SemaphoreService } from '../coordination/semaphores.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { AdminService } from '../users/admins.js';
import { parseDocumentId, parseLeaseToken, refusal } from './documents.js';
import type { Shards } from '../shared/shards.js';

/** A lease's `seconds`: its default and bounds. */
export const LEASE_SECONDS = { default: 60, min: 1, max: 600 } as const;
/** `waitSeconds`: its default and most. */
export const LEASE_WAIT_SECONDS = { default: 0, max: 30 } as const;

export interface DocumentLease {
  documentId: string;
  token: string;
  /** A decimal string: higher for every later holder. */
  fencingToken: string;
  holder: string;
  expiresAt: Date;
  depth: number;
}

export interface LeaseServiceDeps {
  commands: DocumentCommands;
  shards: Shards<Shard>;
  admins: AdminService;
  semaphores: SemaphoreService;
  poller: MailboxPoller;
  /** LEASES_PER_USER_MAX and LEASE_WAITS_PER_USER_MAX. */
  options: { perUser: number; waitsPerUser: number };
}

/** The per-user semaphore of leases held: its holders are the ids of the documents leased. */
const placesOf = (user: string) => `leases:${user}`;

export class LeaseService {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards<Shard>;
  private readonly admins: AdminService;
  private readonly semaphores: SemaphoreService;
  private readonly options: LeaseServiceDeps['options'];
  private readonly taker: ReentrantTaker<{ isAdmin: boolean }, Refused>;
  /** Waits going on in this process, by user. */
  private readonly waiting = new Map<string, number>();

  constructor(deps: LeaseServiceDeps) {
    ({
      commands: this.commands,
      shards: this.shards,
      admins: this.admins,
      semaphores: this.semaphores,
      options: this.options,
    } = deps);
    const { commands, shards } = this;
    this.taker = new ReentrantTaker<{ isAdmin: boolean }, Refused>({
      poller: deps.poller,
      takes: {
        head: (id) => commands.leaseHead({ shard: shards.of(id), id }),
        acquire: ({ name: id, owner: user, ...rest }) =>
          commands.acquireLease({ shard: shards.of(id), id, user, ...rest }),
      },
    });
  }

  /** Who edits document `id` now (null when nobody), for a user who may take its lease (author or admin). */
  async documentLease(user: string, input: { id: string }): Promise<DocumentLease | null> {
    const id = parseDocumentId(input.id);
    await this.shards.ready();
    const shard = this.shards.of(id);
    const { author } = await this.commands.readDocumentState({ shard, id });
    if (author === null) throw notFound(`document "${id}"`);
    if (author !== user && !(await this.admins.isAdmin({ username: user })))
      throw refusal({ refused: STATUS.NOT_OWNER }, id);
    const held = await this.commands.readLease({ shard, id });
    return held && lease(id, held);
  }

  /**
   * Takes document `id`'s editing lease for `seconds` as `user` (its author or an admin), or enters it once more
   * when `user` holds it (depth + 1; its end moves to `seconds` from now unless that is earlier than it was: a
   * re-entry never shortens a lease). Waits up to `waitSeconds` for another user's lease to be released or to
   * expire, then CONFLICT naming the holder.
   */
  async acquireDocumentLease(
    user: string,
    input: { id: string; seconds: number; waitSeconds: number },
  ): Promise<DocumentLease> {
    const id = parseDocumentId(input.id);
    const leaseMs = seconds('seconds', input.seconds, LEASE_SECONDS.min, LEASE_SECONDS.max) * 1000;
    const waitMs = seconds('waitSeconds', input.waitSeconds, 0, LEASE_WAIT_SECONDS.max) * 1000;
    // Counted before anything is awaited, so that calls arriving together cannot all pass the bound.
    const waits = this.waiting.get(user) ?? 0;
    if (waitMs > 0 && waits >= this.options.waitsPerUser)
      throw new AppError(
        'BUSY',
        `at most ${this.options.waitsPerUser} lease waits of one user at once; try again later`,
      );
    if (waitMs > 0) this.waiting.set(user, waits + 1);
    try {
      await this.shards.ready();
      return await this.take(user, { id, leaseMs, waitMs });
    } finally {
      if (waitMs > 0) this.release1(user);
    }
  }

  /** Gives `user`'s lease `token` of document `id` `seconds` from now (CONFLICT when it is not the live lease). */
  async renewDocumentLease(
    user: string,
    input: { id: string; token: string; seconds: number },
  ): Promise<DocumentLease> {
    const id = parseDocumentId(input.id);
    const token = parseLeaseToken('token', input.token);
    const leaseMs = seconds('seconds', input.seconds, LEASE_SECONDS.min, LEASE_SECONDS.max) * 1000;
    await this.shards.ready();
    const renewed = await this.commands.renewLease({ shard: this.shards.of(id), id, user, token, leaseMs });
    if (isRefused(renewed)) throw leaseRefusal(renewed, id);
    await this.semaphores.refresh({ name: placesOf(user), holder: id, timeoutMs: leaseMs + 1000 });
    const { fence, depth } = renewed;
    return {
      documentId: id,
      token,
      fencingToken: fence,
      holder: user,
      expiresAt: new Date(Date.now() + leaseMs),
      depth,
    };
  }

  /**
   * Leaves `user`'s lease `token` of document `id` once: true when it is free now, false when `user` still holds it
   * (it was taken more times than released). CONFLICT when it is not the live lease.
   */
  async releaseDocumentLease(user: string, input: { id: string; token: string }): Promise<boolean> {
    const id = parseDocumentId(input.id);
    const token = parseLeaseToken('token', input.token);
    await this.shards.ready();
    const depth = await this.commands.releaseLease({ shard: this.shards.of(id), id, user, token });
    if (isRefused(depth)) throw leaseRefusal(depth, id);
    if (depth > 0) return false;
    await this.semaphores.release({ name: placesOf(user), holder: id });
    return true;
  }

  /** Takes the lease with a place among the user's leases, for the wait and the lease; given back unless taken. */
  private async take(user: string, { id, leaseMs, waitMs }: { id: string; leaseMs: number; waitMs: number }) {
    const place = { name: placesOf(user), holder: id };
    const placed = await this.semaphores.acquire({
      ...place,
      limit: this.options.perUser,
      timeoutMs: waitMs + leaseMs,
    });
    if (!placed)
      throw new AppError('BUSY', `a user holds at most ${this.options.perUser} document leases; release one first`);
    let taken: DocumentLease | null = null;
    try {
      const options = { name: id, owner: user, leaseMs, waitMs };
      let result = await this.taker.acquire({ ...options, isAdmin: false });
      if (isRefused(result) && result.refused === STATUS.NOT_OWNER && (await this.admins.isAdmin({ username: user })))
        result = await this.taker.acquire({ ...options, isAdmin: true });
      if (isRefused(result)) throw refusal(result, id);
      if (isBusy(result))
        throw conflict(
          `document "${id}" is being edited by ${result.holder} (lease ends in ${Math.ceil(result.heldForMs / 1000)} s); try again later`,
        );
      taken = lease(id, result);
    } finally {
      if (!taken) await this.semaphores.release(place);
    }
    // The place lasts as long as the lease (a re-entry may have kept a later end).
    await this.semaphores.refresh({ ...place, timeoutMs: taken.expiresAt.getTime() - Date.now() + 1000 });
    return taken;
  }

  private release1(user: string): void {
    const left = (this.waiting.get(user) ?? 1) - 1;
    if (left > 0) this.waiting.set(user, left);
    else this.waiting.delete(user);
  }
}

function lease(documentId: string, held: ReentrantHeld): DocumentLease {
  return {
    documentId,
    token: held.token,
    fencingToken: held.fence,
    holder: held.owner,
    expiresAt: new Date(Date.now() + held.leftMs),
    depth: held.depth,
  };
}

/** `raw` seconds checked against its bounds (BAD_USER_INPUT naming `argument`). */
function seconds(argument: string, raw: number, min: number, max: number): number {
  if (!Number.isSafeInteger(raw) || raw < min || raw > max)
    throw badInput(argument, `must be a whole number of seconds from ${min} to ${max}`);
  return raw;
}

/** The error of a renew or release refused: the token is not the live lease's, or another user's. */
function leaseRefusal(refused: Refused, id: string): Error {
  if (refused.refused === STATUS.LEASED)
    return conflict(
      `the lease token given is not document "${id}"'s live lease (it expired or was released): acquire the lease again`,
    );
  if (refused.refused === STATUS.NOT_OWNER) return forbidden(`document "${id}"'s lease is another user's`);
  return refusal(refused, id);
}
