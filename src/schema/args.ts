/** What the schema derives from what a service states once (a page's default and bound, an enum's list), never repeats. */
import type { Page } from '../services/shared/paging.js';
import type { builder } from './builder.js';

type ArgBuilder = Parameters<Parameters<typeof builder.queryFields>[0]>[0]['arg'];

/** `first: Int! = <page.default>`, its bound in its description (the service checks the bound). */
export const firstArg = (arg: ArgBuilder, page: Page) =>
  arg.int({ required: true, defaultValue: page.default, description: `At most ${page.max}.` });

/** An enum's values from its one list, in its order, each described (the Record makes the descriptions exhaustive). */
export const enumValues = <V extends string>(list: readonly V[], descriptions: Record<V, string>) =>
  Object.fromEntries(list.map((v) => [v, { description: descriptions[v] }])) as Record<V, { description: string }>;
