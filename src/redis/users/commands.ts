/**
 * The users domain's door to Redis: profiles and the directory, admin grants, sessions and their revocations.
 * The services of src/services/users/ reach Redis only through the object userCommands() returns.
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import type { ReplicaWait } from '../replicas.js';
import { script } from '../scripts.js';
import { startingWith } from '../replies.js';
import { STATUS } from '../status.js';
import { userKeys } from './keys.js';

const signUpScript = script<number>('signUp');
const revokeAdminScript = script<number>('revokeAdmin');
const signOutScript = script<[number, number]>('signOut');

export type UserCommands = ReturnType<typeof userCommands>;

/** `replicated`: what a session's creation waits on before it is acknowledged (src/redis/replicas.ts). */
export function userCommands(redis: RedisClient, space: Keyspace, replicated: ReplicaWait) {
  const k = userKeys(space);
  const revocations = k.sessionRevocations();
  return {
    /** Creates the profile of `username` unless the name is taken; false when it is. */
    async signUp(a: { username: string; passwordHash: string; createdAt: number }): Promise<boolean> {
      const status = await signUpScript(redis, [k.userProfile(a.username)], [a.username, a.passwordHash, a.createdAt]);
      return status !== STATUS.EXISTS;
    },

    /** The stored password hash of `username`; null when there is no such user. */
    passwordHash(a: { username: string }): Promise<string | null> {
      return redis.hget(k.userProfile(a.username), 'passwordHash');
    },

    /** Whether each of `usernames` has a profile, in one round trip per node. */
    async exist(a: { usernames: readonly string[] }): Promise<boolean[]> {
      const found = await Promise.all(a.usernames.map((u) => redis.exists(k.userProfile(u))));
      return found.map((n) => n === 1);
    },

    /**
     * Every username with a profile, in batches: a SCAN of every master (what the users' Bloom filter is filled
     * from; the directory lacks system users and sign-ups cut short).
     */
    async *usernames(): AsyncGenerator<string[]> {
      const pattern = k.userProfile('*');
      for (const node of 'nodes' in redis ? redis.nodes('master') : [redis]) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          const names = keys.map((key) => key.slice(key.indexOf('{') + 1, key.lastIndexOf('}')));
          if (names.length > 0) yield names;
        } while (cursor !== '0');
      }
    },

    /** Lists `username` in the directory (again: listing is idempotent). */
    async addToDirectory(a: { username: string }): Promise<void> {
      await redis.zadd(k.userDirectory(), 0, a.username);
    },

    /** Directory names starting with `prefix` (lower case), in order, at most `limit`. */
    directory(a: { prefix: string; limit: number }): Promise<string[]> {
      return redis.zrangebylex(k.userDirectory(), ...startingWith(a.prefix), 'LIMIT', 0, a.limit);
    },

    /** Whether each of `usernames` holds a stored admin grant. */
    async haveGrants(a: { usernames: readonly string[] }): Promise<boolean[]> {
      if (a.usernames.length === 0) return [];
      return (await redis.smismember(k.admins(), ...a.usernames)).map((n) => n === 1);
    },

    async grantAdmin(a: { username: string }): Promise<void> {
      await redis.sadd(k.admins(), a.username);
    },

    /** Takes the stored grant of `username` back: 'revoked', 'none' (there was none) or 'last' (refused). */
    async revokeAdmin(a: { username: string }): Promise<'revoked' | 'none' | 'last'> {
      const status = await revokeAdminScript(redis, [k.admins()], [a.username]);
      return status === STATUS.LAST_ADMIN ? 'last' : status === 1 ? 'revoked' : 'none';
    },

    /** The users holding a stored grant, unsorted. */
    grants(): Promise<string[]> {
      return redis.smembers(k.admins());
    },

    /** Stores a session of `username` under the token's hash, expiring after `ttlSeconds` idle. */
    async createSession(a: { tokenHash: string; username: string; ttlSeconds: number }): Promise<void> {
      await redis.set(k.session(a.tokenHash), a.username, 'EX', a.ttlSeconds);
      await replicated(k.session(a.tokenHash));
    },

    /** The username of a session (null: none), pushing its idle expiry back to `ttlSeconds`. */
    touchSession(a: { tokenHash: string; ttlSeconds: number }): Promise<string | null> {
      return redis.getex(k.session(a.tokenHash), 'EX', a.ttlSeconds);
    },

    /** Deletes a session; false when there was none. */
    async deleteSession(a: { tokenHash: string }): Promise<boolean> {
      return (await redis.del(k.session(a.tokenHash))) === 1;
    },

    /** Where revocations are announced: the head that moves with each, its doorbell, a process's confirmations. */
    revocations,

    /** Rings the revocation of `tokenHash` (its session deleted first): the ring's value and how many processes heard it. */
    async signOut(a: { tokenHash: string; ackChannel: string }): Promise<{ value: string; receivers: number }> {
      const [value, receivers] = await signOutScript(
        redis,
        [revocations.head],
        [revocations.bell, a.tokenHash, a.ackChannel],
      );
      return { value: String(value), receivers };
    },

    /** Confirms revocation `value` to the process that rang it. */
    async confirmRevocation(a: { ackChannel: string; value: string }): Promise<void> {
      await redis.spublish(a.ackChannel, a.value);
    },
  };
}
