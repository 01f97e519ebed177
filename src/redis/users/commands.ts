/** The users domain's scripts, with named arguments. */
import type { RedisClient } from '../clients.js';
import { script } from '../scripts.js';
import { STATUS } from '../status.js';
import type { UserKeys } from './keys.js';

const signUpScript = script<number>('signUp');
const revokeAdminScript = script<number>('revokeAdmin');
const signOutScript = script<[number, number]>('signOut');

/** Creates the profile of `username` unless the name is taken; false when it is. */
export async function signUp(
  redis: RedisClient,
  k: UserKeys,
  a: { username: string; passwordHash: string; createdAt: number },
): Promise<boolean> {
  return (
    (await signUpScript(redis, [k.userProfile(a.username)], [a.username, a.passwordHash, a.createdAt])) !==
    STATUS.EXISTS
  );
}

/** Takes the stored grant of `username` back: 'revoked', 'none' (there was none) or 'last' (refused). */
export async function revokeAdmin(
  redis: RedisClient,
  k: UserKeys,
  a: { username: string },
): Promise<'revoked' | 'none' | 'last'> {
  const status = await revokeAdminScript(redis, [k.admins()], [a.username]);
  return status === STATUS.LAST_ADMIN ? 'last' : status === 1 ? 'revoked' : 'none';
}

/** Rings the revocation of the session `tokenHash`; resolves with the ring's head value and how many processes heard it. */
export async function signOut(
  redis: RedisClient,
  k: UserKeys,
  a: { tokenHash: string; ackChannel: string },
): Promise<{ value: string; receivers: number }> {
  const { head, bell } = k.sessionRevocations();
  const [value, receivers] = await signOutScript(redis, [head], [bell, a.tokenHash, a.ackChannel]);
  return { value: String(value), receivers };
}
