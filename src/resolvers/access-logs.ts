/** Access-log uploads and daily visits: who is asking (the schema's scopes), which arguments, one service call. */
import type { SignedIn } from '../context.js';
import type { GeoLevel, LogUpload } from '../services/access-logs/access-logs.js';

export const uploadAccessLog = (_root: unknown, args: { file: File }, ctx: SignedIn): Promise<LogUpload> =>
  ctx.services.accessLogs.upload(ctx.viewer.username, args);

export const dailyVisits = (_root: unknown, args: { day: string; level: GeoLevel; first: number }, ctx: SignedIn) =>
  ctx.services.accessLogs.dailyVisits(args);
