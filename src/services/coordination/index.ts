/** The coordination domain: locks (plain, reentrant, read-write, and RedLock over independent servers), semaphores and task queues, used inside the product (the worker runs the queues). */
import { coordinationCommands, redlockCommands } from '../../redis/coordination/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Base, Domain, DomainMetric } from '../shared/domain.js';
import { LockService } from './locks.js';
import { QueueService } from './queues.js';
import { RwLockService } from './rwlocks.js';
import { RedLock, type JobLocks } from './redlock.js';
import { reentrantStore, ReentrantLockService } from './reentrant.js';
import { SemaphoreService } from './semaphores.js';

/**
 * `jobLocks`, what the periodic jobs lock with, is RedLock over the servers of REDLOCK_NODES when it lists some, else
 * the plain lock on the product's Redis.
 */
export function createCoordination(
  { redis, space, replicated, config, log }: Base,
  { poller }: { poller: MailboxPoller },
): Domain<{
  locks: LockService;
  rwlocks: RwLockService;
  redlock: RedLock | undefined;
  jobLocks: JobLocks;
  reentrantLocks: ReentrantLockService;
  semaphores: SemaphoreService;
  queues: QueueService;
}> {
  const commands = coordinationCommands(redis, space, replicated, log);
  const locks = new LockService({ commands, poller, log });
  const { nodes, maxLeaseMs, timeoutMs } = config.redlock;
  const servers = nodes.length > 0 ? redlockCommands({ urls: nodes, space, timeoutMs, log }) : undefined;
  const redlock = servers && new RedLock({ nodes: servers.nodes, maxLeaseMs, log });
  return {
    services: {
      locks,
      rwlocks: new RwLockService({ commands, poller, log }),
      redlock,
      jobLocks: redlock ?? locks,
      reentrantLocks: new ReentrantLockService({ store: reentrantStore(commands), poller, log }),
      semaphores: new SemaphoreService({ commands }),
      queues: new QueueService({ commands, poller, defaults: config.queues }),
    },
    close: async () => servers?.close(),
  };
}

/**
 * The depth of task queues for `GET /metrics`, read when scraped: ready, delayed, running and failed tasks of each
 * queue `names` gives (the queues of the task handlers, which the domains created after this one name: the
 * composition passes them, as the `queues` field does).
 */
export function queueDepths(queues: QueueService, names: () => readonly string[]): DomainMetric {
  return {
    name: 'queue_tasks',
    help: 'Tasks in each task queue, by state: ready, delayed (scheduled), running (taken by a worker), failed (filed)',
    type: 'gauge',
    collect: async () => {
      const statuses = await Promise.all(names().map((queue) => queues.status({ queue })));
      return statuses.flatMap(({ name, ...byState }) =>
        Object.entries(byState).map(([state, value]) => ({ labels: { queue: name, state }, value })),
      );
    },
  };
}
