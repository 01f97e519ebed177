/** IP-to-city lookups: any signed-in user (schema/geo.ts), one service call. */
import type { SignedIn } from '../context.js';
import type { City } from '../services/geo/geo.js';

export const cityByIp = (_root: unknown, args: { ip: string }, ctx: SignedIn): Promise<City | null> =>
  ctx.services.geo.cityByIp(args);

export const citiesByIp = (_root: unknown, args: { ips: string[] }, ctx: SignedIn): Promise<(City | null)[]> =>
  ctx.services.geo.citiesByIp(args);
