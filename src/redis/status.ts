/**
 * The negative statuses scripts return when they refuse, one table for every script: a script that names
 * `STATUS.NOT_MEMBER` gets this table as a Lua table (src/redis/scripts.ts), and each domain turns the statuses into
 * AppErrors in one function. A status means the same wherever it is returned; nothing was written.
 */
export const STATUS = {
  /** The object named does not exist (a chat, a scheduled message, an upload). */
  NOT_FOUND: -1,
  /** The user acting is not a member of the chat. */
  NOT_MEMBER: -2,
  /** Joining a chat that is not public. */
  NOT_PUBLIC: -3,
  /** The chat has its most members. */
  FULL: -4,
  /** Only the chat's creator removes members. */
  NOT_CREATOR: -5,
  /** The member to remove is not one. */
  NO_SUCH_MEMBER: -6,
  /** The scheduled message was sent before (the reply goes on with the message's id). */
  SENT_BEFORE: -7,
  /** Creating what already exists. */
  EXISTS: -8,
  /** The last admin grant cannot be revoked. */
  LAST_ADMIN: -9,
  /** The object belongs to another user. */
  NOT_OWNER: -10,
  /** The worker taken for dead has heartbeated since. */
  ALIVE: -11,
  /** The object changed since the caller read what the script needs of it (the caller reads again). */
  CHANGED: -12,
  /** The keys named are of another UTC day than Redis's clock's (the caller asks Redis the day and calls again). */
  WRONG_DAY: -13,
  /** The object is leased to another holder, or the lease token given is not its live lease's (expired, released). */
  LEASED: -14,
  /** The user is in the most chats a user may be (MAX_USER_CHATS). */
  TOO_MANY_CHATS: -15,
} as const;

export type Status = (typeof STATUS)[keyof typeof STATUS];

/** What a domain's command returns when its script refused: which status (nothing was written). */
export interface Refused {
  refused: Status;
}

export const refused = (status: number): Refused => ({ refused: status as Status });

export const isRefused = <T>(reply: T | Refused): reply is Refused =>
  typeof reply === 'object' && reply !== null && 'refused' in reply;

/** The table as Lua source: `local STATUS = { NOT_FOUND = -1, ... }`. */
export function statusLua(): string {
  return `local STATUS = { ${Object.entries(STATUS)
    .map(([name, value]) => `${name} = ${value}`)
    .join(', ')} }`;
}
