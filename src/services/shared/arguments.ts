/**
 * Checks of the arguments that code (not users) passes to the coordination services: a bad one is a
 * programming error, so these throw plain errors rather than BAD_USER_INPUT.
 */
export const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Names of locks, semaphores, queues and tasks go inside key hash tags: no braces, nothing odd. */
export function checkName(kind: string, name: string): void {
  if (!NAME.test(name)) throw new Error(`${kind} name "${name}": letters, digits and _ . : - only, 1 to 128 of them`);
}

export function checkMs(what: string, ms: number, min: number): void {
  if (!Number.isSafeInteger(ms) || ms < min) throw new Error(`${what} must be an integer ≥ ${min} (ms), got ${ms}`);
}
