/** The coordination domain: locks, semaphores and task queues, used inside the product (the worker runs the queues). */
import { coordinationCommands } from '../../redis/coordination/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain } from '../shared/domain.js';
import { LockService } from './locks.js';
import { QueueService } from './queues.js';
import { SemaphoreService } from './semaphores.js';

export function createCoordination(
  { redis, space, replicated, config, log }: Base,
  { poller }: { poller: MailboxPoller },
): Domain<{ locks: LockService; semaphores: SemaphoreService; queues: QueueService }> {
  const commands = coordinationCommands(redis, space, replicated, log);
  return {
    services: {
      locks: new LockService({ commands, poller, log }),
      semaphores: new SemaphoreService({ commands }),
      queues: new QueueService({ commands, poller, defaults: config.queues }),
    },
  };
}
