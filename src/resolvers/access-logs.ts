/** Access-log uploads and daily visits: who is asking, which arguments, one service call. */
import type { Context } from '../context.js';
import type { GeoLevel, LogUpload } from '../services/access-logs/access-logs.js';
import { requireAdmin, requireViewer } from './auth.js';

export const uploadAccessLog = async (_root: unknown, args: { file: File }, ctx: Context): Promise<LogUpload> =>
  ctx.services.accessLogs.upload((await requireAdmin(ctx)).username, args.file);

export const dailyVisits = (
  _root: unknown,
  args: { day: string; level?: GeoLevel | null; first?: number | null },
  ctx: Context,
) => {
  requireViewer(ctx);
  return ctx.services.accessLogs.dailyVisits(args.day, args.level ?? 'COUNTRY', args.first ?? 50);
};
