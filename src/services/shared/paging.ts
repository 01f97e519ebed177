/** Argument checks shared by every paged read. */
import { badInput } from '../../errors.js';

/**
 * A paged argument's default and bound, stated once: the schema's `first: Int! = <default>` (schema/args.ts) and the
 * service's check both read it.
 */
export interface Page {
  readonly default: number;
  readonly max: number;
}

/** `first` must be an integer from 0 to `max`. */
export function checkPage(argument: string, first: number, max: number): void {
  if (!Number.isInteger(first) || first < 0 || first > max) throw badInput(argument, `must be between 0 and ${max}`);
}
