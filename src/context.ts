/**
 * The per-operation context, the same for HTTP and WebSocket: who is asking, the services, a logger
 * carrying the request id. Built once per operation, so a revoked token stops working at the next one.
 */
import type { Logger } from './logger.js';
import type { Services } from './services/index.js';

export interface Viewer {
  username: string;
  isAdmin: boolean;
}

export interface Context {
  viewer: Viewer | null;
  /** The bearer token of this operation, when one was sent and is still valid. */
  token: string | null;
  services: Services;
  log: Logger;
  requestId: string;
}

/** Extracts the token of an `Authorization: Bearer <token>` value; undefined when absent, null when malformed. */
export function bearerToken(authorization: unknown): string | null | undefined {
  if (authorization === undefined || authorization === null || authorization === '') return undefined;
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  return match?.[1] ?? null;
}

export async function resolveViewer(
  services: Services,
  adminUsers: ReadonlySet<string>,
  token: string | null | undefined,
): Promise<Viewer | null> {
  if (!token) return null;
  const username = await services.sessions.resolve(token);
  return username ? { username, isAdmin: adminUsers.has(username) } : null;
}
