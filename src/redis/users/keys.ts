/** Keys of users and sessions. */
import type { Keyspace } from '../keys.js';

export type UserKeys = ReturnType<typeof userKeys>;

export function userKeys({ key }: Keyspace) {
  return {
    /** hash: username, passwordHash, createdAt */
    userProfile: (username: string) => key('user', username, 'profile'),
    /** sorted set, every score 0: lowercase usernames, read with ZRANGEBYLEX */
    userDirectory: () => key('users', 'dir', 'names'),
    /** set: the usernames holding a stored admin grant */
    admins: () => key('users', 'admins'),
    /** string: the username a session token (by its SHA-256) belongs to, with an idle expiry */
    session: (tokenHash: string) => key('session', tokenHash),
    /** Revoked sessions, for the processes that cache sessions. */
    sessionRevocations: () => ({
      /** string: a counter that moves on every revocation */
      head: key('sessions', 'revoked', 'head'),
      /** sharded pub/sub channel: the doorbell, rung with "<head> <new value> <token hash> <ack channel>" */
      bell: key('sessions', 'revoked', 'bell'),
      /** sharded pub/sub channel of one process: every process that heard a revocation confirms it here with "<value>" */
      ack: (processId: string) => key('sessions', 'revoked', 'ack', processId),
    }),
  };
}
