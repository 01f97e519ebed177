/**
 * The per-operation context, the same for HTTP and WebSocket: who is asking, the services, a logger
 * carrying the request id. Built once per operation, so a revoked token stops working at the next one.
 */
import DataLoader from 'dataloader';
import type { Logger } from './logger.js';
import type { ChatState } from './services/chat/chats.js';
import type { Services } from './services/index.js';

/** Who is asking. Whether they are an admin is asked only where it matters (resolvers/auth.ts requireAdmin). */
export interface Viewer {
  username: string;
}

export interface Context {
  viewer: Viewer | null;
  /** The bearer token of this operation, when one was sent and is still valid. */
  token: string | null;
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

/**
 * Per-operation batching: every chat field resolved in one tick of execution becomes one batch, sent as one
 * pipeline per Redis node (`chats { unreadCount members }` for fifty chats: two batches, not hundreds of trips).
 */
export interface Loaders {
  /** A chat as the viewer sees it; null when it does not exist. */
  chatState: DataLoader<string, ChatState | null>;
  /** Member names of a chat by [chatId, prefix, first]. */
  chatMembers: DataLoader<readonly [string, string, number], string[], string>;
  /** Whether a user is an admin (User.isAdmin). */
  isAdmin: DataLoader<string, boolean>;
}

export function createLoaders(services: Services, viewer: Viewer | null): Loaders {
  const username = viewer?.username ?? '';
  return {
    chatState: new DataLoader((ids) => services.chats.states(ids, username)),
    chatMembers: new DataLoader(
      // A bad argument fails its own query only (DataLoader takes an Error in place of a value).
      (queries) =>
        Promise.all(queries.map(([id, prefix, first]) => services.chats.members(id, prefix, first).catch((err: Error) => err))),
      { cacheKeyFn: (q) => q.join('\0') },
    ),
    isAdmin: new DataLoader((usernames) => services.admins.areAdmins(usernames)),
  };
}

/** Extracts the token of an `Authorization: Bearer <token>` value; undefined when absent, null when malformed. */
export function bearerToken(authorization: unknown): string | null | undefined {
  if (authorization === undefined || authorization === null || authorization === '') return undefined;
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  return match?.[1] ?? null;
}

export async function resolveViewer(services: Services, token: string | null | undefined): Promise<Viewer | null> {
  if (!token) return null;
  const username = await services.sessions.resolve(token);
  return username ? { username } : null;
}
