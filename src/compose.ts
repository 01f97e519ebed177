/** Joining what the domains export into one object, for the central files that compose them. */

/** One object of every part's names; a name that two parts give is a mistake (one would silently win): it throws. */
export function joinNamed<T extends object>(kind: string, parts: readonly object[]): T {
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [name, value] of Object.entries(part)) {
      if (name in out) throw new Error(`the ${kind} "${name}" is given twice`);
      out[name] = value;
    }
  }
  return out as T;
}
