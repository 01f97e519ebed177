/**
 * Replies of the reentrant lock's Lua (lib/reentrant.lua), shared by the domains whose scripts include it: the
 * coordination domain's reentrant locks and the documents' editing leases.
 */

/** A reentrant lock as its holder has it. */
export interface ReentrantHeld {
  owner: string;
  token: string;
  /** How many times the owner entered it without leaving. */
  depth: number;
  /** The holder's fencing token, a decimal string (higher for every later holder). */
  fence: string;
  /** The ms left on the lease. */
  leftMs: number;
}

/** Refused: another owner holds it. */
export interface ReentrantBusy {
  holder: string;
  heldForMs: number;
}

/** The reply of reentrantAcquire: {1, fence, token, depth, ms left} or {0, ms left, holder}. */
export type ReentrantReply = [1, number, string, number, number] | [0, number, string];

export function reentrantAcquired(reply: ReentrantReply, owner: string): ReentrantHeld | ReentrantBusy {
  if (reply[0] === 0) return { holder: reply[2], heldForMs: reply[1] };
  const [, fence, token, depth, leftMs] = reply;
  return { owner, token, depth, fence: String(fence), leftMs };
}

/** The lock's state from its key's value and PTTL (lib/reentrant.lua's format); null when it is free. */
export function reentrantState(value: string | null, pttl: number): ReentrantHeld | null {
  const match = value === null ? null : /^(\S+) (\S+) (\d+) (\d+)\+?$/.exec(value);
  if (!match || pttl < 0) return null;
  return { owner: match[1]!, token: match[2]!, depth: Number(match[3]), fence: match[4]!, leftMs: pttl };
}
