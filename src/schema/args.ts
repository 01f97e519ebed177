/** Arguments made from what a service states once (a page's default and bound), so the schema never repeats it. */
import type { Page } from '../services/shared/paging.js';
import type { builder } from './builder.js';

type ArgBuilder = Parameters<Parameters<typeof builder.queryFields>[0]>[0]['arg'];

/** `first: Int! = <page.default>`, its bound in its description (the service checks the bound). */
export const firstArg = (arg: ArgBuilder, page: Page) =>
  arg.int({ required: true, defaultValue: page.default, description: `At most ${page.max}.` });
