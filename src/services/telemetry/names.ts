/** The names clients read counters, statistics and logs by. */
import { badInput } from '../../errors.js';

/** What the gateway writes (operation names, `gateway`) fits this. */
const NAME = /^[^{}\s]{1,200}$/;

/** A counter's, statistic's or log's name as `argument` gave it: 1 to 200 characters, without spaces or braces. */
export function checkName(argument: string, value: string): string {
  if (!NAME.test(value)) throw badInput(argument, 'must be 1 to 200 characters, without spaces or braces');
  return value;
}
