export const HOUR_MS = 3_600_000;

/** The start (ms) of the hour `ms` falls in: what the hourly statistics and logs rotate on. */
export function hourStart(ms: number): number {
  return ms - (ms % HOUR_MS);
}
