/** IP-to-city lookups: any signed-in user, one service call. */
import type { Context } from '../context.js';
import type { City } from '../services/geo/geo.js';
import { requireViewer } from './auth.js';

export const cityByIp = (_root: unknown, args: { ip: string }, ctx: Context): Promise<City | null> => {
  requireViewer(ctx);
  return ctx.services.geo.cityByIp(args.ip);
};

export const citiesByIp = (_root: unknown, args: { ips: string[] }, ctx: Context): Promise<(City | null)[]> => {
  requireViewer(ctx);
  return ctx.services.geo.citiesByIp(args.ips);
};
