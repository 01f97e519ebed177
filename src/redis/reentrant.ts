/**
 * One try at, and the replies of, the reentrant lock's Lua (lib/reentrant.lua), shared by the domains whose scripts
 * include it: the coordination domain's reentrant locks and the documents' editing leases.
 */

/** A reentrant lock as its holder has it. */
export interface ReentrantEntry {
  owner: string;
  token: string;
  /** How many times the owner entered it without leaving. */
  depth: number;
  /** The ms left on the lease. */
  leftMs: number;
}

/** A reentrant lock as its holder has it, with the fencing token drawn at the take (the documents' leases). */
export interface ReentrantHeld extends ReentrantEntry {
  /** The holder's fencing token, a decimal string (higher for every later holder). */
  fence: string;
}

/** One try at taking a reentrant lock: `waits`, the caller waits if refused; `others`, others of its process wait; `first`, the acquire's first try. */
export interface ReentrantTry {
  name: string;
  owner: string;
  token: string;
  leaseMs: number;
  waits: boolean;
  others: boolean;
  first: boolean;
}

/** Refused: another owner holds it. */
export interface ReentrantBusy {
  holder: string;
  heldForMs: number;
}

/** The reply of reentrantAcquire: {1, fence, token, depth, ms left} or {0, ms left, holder}. */
export type ReentrantReply = [1, number, string, number, number] | [0, number, string];

/** The reply of reentrantAcquire without its fencing token (the coordination domain's locks draw it on demand). */
export function reentrantEntered(reply: ReentrantReply, owner: string): ReentrantEntry | ReentrantBusy {
  if (reply[0] === 0) return { holder: reply[2], heldForMs: reply[1] };
  const [, , token, depth, leftMs] = reply;
  return { owner, token, depth, leftMs };
}

export function reentrantAcquired(reply: ReentrantReply, owner: string): ReentrantHeld | ReentrantBusy {
  const entered = reentrantEntered(reply, owner);
  return 'holder' in entered ? entered : { ...entered, fence: String(reply[1]) };
}

/** A lock's value as lib/reentrant.lua writes it, unmarked: "<owner> <token> <depth> <fence>". */
export function reentrantValue(owner: string, token: string, depth: number, fence: string): string {
  return `${owner} ${token} ${depth} ${fence}`;
}

/** The lock's state from its key's value and PTTL (lib/reentrant.lua's format); null when it is free. */
export function reentrantState(value: string | null, pttl: number): ReentrantHeld | null {
  const match = value === null ? null : /^(\S+) (\S+) (\d+) (\d+)\+?$/.exec(value);
  if (!match || pttl < 0) return null;
  return { owner: match[1]!, token: match[2]!, depth: Number(match[3]), fence: match[4]!, leftMs: pttl };
}
