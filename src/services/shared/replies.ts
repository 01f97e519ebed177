/** Helpers for Redis replies. */

/** The [member, score] pairs of a WITHSCORES reply, scores as numbers. */
export function pairs(reply: readonly string[]): [string, number][] {
  const out: [string, number][] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) out.push([reply[i]!, Number(reply[i + 1])]);
  return out;
}
