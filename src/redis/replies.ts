/** Helpers for Redis arguments and replies, shared by the domains' commands. */

/** The [member, score] pairs of a WITHSCORES reply, scores as numbers. */
export function pairs(reply: readonly string[]): [string, number][] {
  const out: [string, number][] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) out.push([reply[i]!, Number(reply[i + 1])]);
  return out;
}

/** ZRANGEBYLEX bounds of the members starting with `prefix` (\x7f sorts after every character a name may hold). */
export function startingWith(prefix: string): [string, string] {
  return [`[${prefix}`, `[${prefix}\x7f`];
}
