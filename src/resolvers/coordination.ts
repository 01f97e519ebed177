/** Task queues: who is asking, one service call. */
import type { Context } from '../context.js';
import type { QueueStatus } from '../services/coordination/queues.js';
import { requireAdmin } from './auth.js';

/** Every queue a worker handles tasks of. */
export const queues = async (_root: unknown, _args: unknown, ctx: Context): Promise<QueueStatus[]> => {
  await requireAdmin(ctx);
  const names = [...new Set(ctx.services.handlers.map((h) => h.queue))];
  return Promise.all(names.map((name) => ctx.services.queues.status(name)));
};
