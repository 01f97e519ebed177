/** The coordination domain: locks, semaphores and task queues, used inside the product (the worker runs the queues). */
import { coordinationKeys } from '../../redis/coordination/keys.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain } from '../shared/domain.js';
import { LockService } from './locks.js';
import { QueueService } from './queues.js';
import { SemaphoreService } from './semaphores.js';

export function createCoordination(
  { redis, space, config, log }: Base,
  { poller }: { poller: MailboxPoller },
): Domain<{ locks: LockService; semaphores: SemaphoreService; queues: QueueService }> {
  const keys = coordinationKeys(space);
  return {
    services: {
      locks: new LockService(redis, keys, poller, log),
      semaphores: new SemaphoreService(redis, keys),
      queues: new QueueService(redis, keys, config.queues),
    },
  };
}
