import * as resolvers from '../resolvers/coordination.js';
import { FAILED_KEPT, type QueueStatus } from '../services/coordination/queues.js';
import { builder } from './builder.js';

const QueueStatusType = builder.objectRef<QueueStatus>('QueueStatus').implement({
  description: `Tasks of one queue: ready to run, delayed, running on a worker, and failed (kept: the newest ${FAILED_KEPT}).`,
  fields: (t) => ({
    name: t.exposeString('name'),
    ready: t.exposeInt('ready'),
    delayed: t.exposeInt('delayed'),
    running: t.exposeInt('running'),
    failed: t.exposeInt('failed'),
  }),
});

builder.queryFields((t) => ({
  queues: t
    .withAuth({ admin: true })
    .field({ type: [QueueStatusType], description: 'Admin: the task queues.', resolve: resolvers.queues }),
}));
