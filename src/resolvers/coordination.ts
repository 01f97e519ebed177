/** Task queues: the admin scope (schema/coordination.ts) decides who asks; one service call. */
import type { SignedIn } from '../context.js';
import type { FailedTask, QueueStatus } from '../services/coordination/queues.js';

/** Every queue a worker handles tasks of. */
export const queues = (_root: unknown, _args: unknown, ctx: SignedIn): Promise<QueueStatus[]> => {
  const names = [...new Set(ctx.services.handlers.map((h) => h.queue))];
  return Promise.all(names.map((queue) => ctx.services.queues.status({ queue })));
};

/** A queue's newest failed tasks (the queue's field, so its parent is the status `queues` read). */
export const failedTasks = (status: QueueStatus, { first }: { first: number }, ctx: SignedIn): Promise<FailedTask[]> =>
  ctx.services.queues.failed({ queue: status.name, count: first });

export const retryFailedTask = (_root: unknown, args: { queue: string; id: string }, ctx: SignedIn): Promise<boolean> =>
  ctx.services.queues.retryFailed(args);
