import * as resolvers from '../resolvers/coordination.js';
import { FAILED_KEPT, FAILED_PAGE, type FailedTask, type QueueStatus } from '../services/coordination/queues.js';
import { firstArg } from './args.js';
import { builder } from './builder.js';

const FailedTaskType = builder.objectRef<FailedTask>('FailedTask').implement({
  description: 'A task that used all its attempts: `retryFailedTask` puts it back in its queue.',
  fields: (t) => ({
    id: t.id({ resolve: (f) => f.task.id }),
    name: t.string({ resolve: (f) => f.task.name }),
    error: t.exposeString('error', { description: 'Why its last attempt failed.' }),
    failedAt: t.expose('failedAt', { type: 'DateTime' }),
    attempts: t.int({ resolve: (f) => f.task.attempts }),
  }),
});

const QueueStatusType = builder.objectRef<QueueStatus>('QueueStatus').implement({
  description: `Tasks of one queue: ready to run, delayed, running on a worker, and failed (kept: the newest ${FAILED_KEPT}).`,
  fields: (t) => ({
    name: t.exposeString('name'),
    ready: t.exposeInt('ready'),
    delayed: t.exposeInt('delayed'),
    running: t.exposeInt('running'),
    failed: t.exposeInt('failed'),
    failedTasks: t.withAuth({ admin: true }).field({
      type: [FailedTaskType],
      description: 'The newest failed tasks, newest first.',
      args: { first: firstArg(t.arg, FAILED_PAGE) },
      resolve: resolvers.failedTasks,
    }),
  }),
});

builder.queryFields((t) => ({
  queues: t
    .withAuth({ admin: true })
    .field({ type: [QueueStatusType], description: 'Admin: the task queues.', resolve: resolvers.queues }),
}));

builder.mutationFields((t) => ({
  retryFailedTask: t.withAuth({ admin: true }).boolean({
    description:
      'Admin: puts the failed task `id` of `queue` back in its queue with all its attempts; false when no failed task has that id (already retried).',
    args: { queue: t.arg.string({ required: true }), id: t.arg.id({ required: true }) },
    resolve: resolvers.retryFailedTask,
  }),
}));
