/**
 * The per-operation context, the same for HTTP and WebSocket: who is asking, the services, a logger
 * carrying the request id. Built once per operation, so a revoked token stops working at the next one.
 */
import type { Logger } from './logger.js';
import type { Services } from './services/index.js';
import { SessionService } from './services/users/sessions.js';

/** Who is asking. Whether they are an admin is asked only where it matters (the admin scope, schema/builder.ts). */
export interface Viewer {
  username: string;
}

export interface Context {
  viewer: Viewer | null;
  /** The bearer token of this operation, when one was sent and is still valid. */
  token: string | null;
  /**
   * The bearer token sent when it has a token's shape, valid or not: what signOut revokes (a retry of a sign-out cut
   * short finds the session gone and must still announce the revocation).
   */
  presentedToken: string | null;
  /** Why the Authorization sent was not a session (what a refusal tells the client); null when none was sent. */
  rejected: string | null;
  services: Services;
  log: Logger;
  requestId: string;
  /** The client's address (the HTTP connection's, or the WebSocket's): what limits anonymous callers. */
  address: string;
  loaders: Loaders;
  /**
   * WebSocket operations only: resolves once the client has received everything sent to it so far (a ping
   * answered by a pong, which WebSocket orders after the earlier frames). `markRead: true` waits for it.
   */
  confirmReceipt?: () => Promise<void>;
}

/** The context of a field that needs a signed-in viewer (the `signedIn` and `admin` scopes of schema/builder.ts). */
export interface SignedIn extends Context {
  viewer: Viewer;
}

/** Per-operation DataLoaders, from every domain (services/<domain>/index.ts). */
export type Loaders = ReturnType<Services['loaders']>;

/** Extracts the token of an `Authorization: Bearer <token>` value; undefined when absent, null when malformed. */
function bearerToken(authorization: unknown): string | null | undefined {
  if (authorization === undefined || authorization === null || authorization === '') return undefined;
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  return match?.[1] ?? null;
}

/** What an Authorization value makes of the caller: a viewer, or why it is none (null: nothing was sent). */
export interface Authentication {
  viewer: Viewer | null;
  token: string | null;
  presentedToken: string | null;
  rejected: string | null;
}

const MALFORMED_TOKEN =
  'the Authorization header is not "Bearer <token>" with a token from signUp or signIn: sign in and send the token it gives';
const EXPIRED_TOKEN = 'token expired or revoked: sign in again';

export async function authenticate(services: Services, authorization: unknown): Promise<Authentication> {
  const token = bearerToken(authorization);
  if (token === undefined) return { viewer: null, token: null, presentedToken: null, rejected: null };
  if (token === null || !SessionService.isWellFormed(token))
    return { viewer: null, token: null, presentedToken: null, rejected: MALFORMED_TOKEN };
  const username = await services.sessions.resolve({ token });
  return username
    ? { viewer: { username }, token, presentedToken: token, rejected: null }
    : { viewer: null, token: null, presentedToken: token, rejected: EXPIRED_TOKEN };
}
