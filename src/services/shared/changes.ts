/** Optimistic changes: a script that refuses with CHANGED (another change came between) is read and run again. */
import { conflict } from '../../errors.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';

/** Reads and tries again this many times while other changes of the same object keep coming between. */
const CHANGE_ATTEMPTS = 10;

/**
 * Runs `attempt` (which reads what its script needs, then runs it) until its script is not refused with CHANGED;
 * CONFLICT naming `what` after CHANGE_ATTEMPTS. Other refusals are the caller's to turn into errors.
 */
export async function whileChanged<T>(what: string, attempt: () => Promise<T | Refused>): Promise<T | Refused> {
  for (let i = 1; i <= CHANGE_ATTEMPTS; i++) {
    const result = await attempt();
    if (!isRefused(result) || result.refused !== STATUS.CHANGED) return result;
  }
  throw conflict(`${what} is being changed by others; try again`);
}
