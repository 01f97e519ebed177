/** Task queues: the admin scope (schema/coordination.ts) decides who asks; one service call. */
import type { SignedIn } from '../context.js';
import type { QueueStatus } from '../services/coordination/queues.js';

/** Every queue a worker handles tasks of. */
export const queues = (_root: unknown, _args: unknown, ctx: SignedIn): Promise<QueueStatus[]> => {
  const names = [...new Set(ctx.services.handlers.map((h) => h.queue))];
  return Promise.all(names.map((queue) => ctx.services.queues.status({ queue })));
};
