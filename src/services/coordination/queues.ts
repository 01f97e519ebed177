/**
 * Reliable task queues (the book's chapter 6 FIFO, priority and delayed queues, without its defects): a worker takes
 * a task into its own active list and removes it when done, so a dead worker's tasks come back; failures retry with
 * backoff, then are filed as failed; due delayed tasks move in one script. Details: docs/coordination.md.
 */
import { randomBytes } from 'node:crypto';
import type { BlockingTakes, CoordinationCommands, SettledTask } from '../../redis/coordination/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import { badInput } from '../../errors.js';
import { checkMs, checkName, NAME } from '../shared/arguments.js';
import { checkPage, type Page } from '../shared/paging.js';

export interface Task {
  id: string;
  name: string;
  args: unknown;
  priority: number;
  /** Attempts already used (failures, and deaths of the workers that ran it). */
  attempts: number;
  maxAttempts: number;
  /** The task exactly as stored: what acknowledging it removes. */
  raw: string;
}

/** A task to create: its handler's name, its arguments, and how it runs. */
export interface NewTask {
  name: string;
  args: unknown;
  /** Higher runs first; default 0. */
  priority?: number;
  maxAttempts?: number;
}

/** A task taken by worker `workerId` from `queue`. */
export interface Taken {
  queue: string;
  workerId: string;
  task: Task;
}

/**
 * A taken task settling (acknowledged, retried, deferred or filed as failed): `take` ready tasks at most move to the
 * worker in its place in the same call, so a busy worker makes one round trip per task (0: a stopping worker).
 */
export type Settling = Taken & { take: number };

/** What settling a task did. */
export interface Settled {
  /** False when the task was no longer the worker's (returned to the queue when it was taken for dead). */
  done: boolean;
  /** The ready tasks taken in its place, first to run first. */
  taken: Task[];
}

export interface QueueStatus {
  name: string;
  ready: number;
  delayed: number;
  running: number;
  failed: number;
}

export interface FailedTask {
  error: string;
  failedAt: Date;
  task: Omit<Task, 'raw'>;
}

export interface QueueDefaults {
  maxAttempts: number;
  /** The first retry waits about this long, each next one twice as long (capped at an hour). */
  backoffMs: number;
}

/** A worker's consumer of one queue, on a connection of its own (BLMOVE holds it while it waits). */
export interface QueueConsumer {
  /** Waits up to `timeoutSeconds` for a ready task and moves it to the worker's active list. */
  take(input: { timeoutSeconds: number }): Promise<Task | null>;
  /** Ends a waiting take at once. */
  interrupt(): void;
  close(): Promise<void>;
}

/** A task's id as newTask makes it (base64url), bounded for ids a client names. */
const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Failed tasks kept per queue, newest first. */
export const FAILED_KEPT = 1000;
/** A read of a queue's failed tasks. */
export const FAILED_PAGE: Page = { default: 20, max: 100 };
const PRIORITY_MAX = 1_000_000;
const BACKOFF_MAX_MS = 3_600_000;
/** Due tasks one promote call moves at most (a poller calls again at once when it moved this many). */
export const PROMOTE_BATCH = 1000;

export interface QueueDeps {
  commands: CoordinationCommands;
  /** The process's doorbell listener: rings of delayed tasks. */
  poller: MailboxPoller;
  defaults: QueueDefaults;
}

export class QueueService {
  private readonly commands: CoordinationCommands;
  private readonly poller: MailboxPoller;
  private readonly defaults: QueueDefaults;

  constructor(deps: QueueDeps) {
    ({ commands: this.commands, poller: this.poller, defaults: this.defaults } = deps);
  }

  /** The task as stored, ready for a script that enqueues it (scheduling does so with its own record). */
  newTask({ name, args, priority = 0, maxAttempts = this.defaults.maxAttempts }: NewTask): string {
    checkName('task', name);
    if (!Number.isSafeInteger(priority) || Math.abs(priority) > PRIORITY_MAX)
      throw new Error(`priority must be an integer within ±${PRIORITY_MAX}`);
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new Error(`maxAttempts must be an integer ≥ 1`);
    return encodeTask({ priority, id: randomBytes(9).toString('base64url'), name, attempts: 0, maxAttempts, args });
  }

  /** Adds a task to `queue`, ready now or after `delayMs`; returns its id. */
  async enqueue({ queue, delayMs = 0, ...task }: NewTask & { queue: string; delayMs?: number }): Promise<string> {
    checkName('queue', queue);
    checkMs('delayMs', delayMs, 0);
    const raw = this.newTask(task);
    await this.commands.enqueueTask({ queue, task: raw, delayMs });
    return parseTask(raw).id;
  }

  /**
   * Moves due delayed tasks to the ready list; returns how many, ms until the next is due (-1: none), and Redis's
   * clock (ms) as it moved them, the clock of due times.
   */
  async promote({ queue, max = PROMOTE_BATCH }: { queue: string; max?: number }): Promise<{
    moved: number;
    nextDueMs: number;
    nowMs: number;
  }> {
    checkName('queue', queue);
    return this.commands.promoteTasks({ queue, max });
  }

  /**
   * Calls `rung` with the due time (ms, Redis's clock) of every task delayed on `queue` from now on (enqueued with a
   * delay, retried, deferred), and `missed` whenever such rings may have been lost (the doorbell connection came
   * back). Returns the function that stops.
   */
  watchDelayed(
    { queue }: { queue: string },
    { rung, missed }: { rung: (dueAtMs: number) => void; missed: () => void },
  ): () => void {
    checkName('queue', queue);
    const bell = this.commands.queueBell({ queue });
    return this.poller.listen({ channel: bell.channel }, (ring) => rung(bell.dueAtMs(ring)), missed);
  }

  /** Moves up to `max` ready tasks to the worker's active list, without waiting; the first to run comes first. */
  async takeReady({ queue, workerId, max }: { queue: string; workerId: string; max: number }): Promise<Task[]> {
    checkName('queue', queue);
    return (await this.commands.takeTasks({ queue, workerId, max })).map(parseTask);
  }

  /** A consumer of `queue` for worker `workerId`, waiting on a connection of its own. */
  consumer({ queue, workerId }: { queue: string; workerId: string }): QueueConsumer {
    checkName('queue', queue);
    const takes: BlockingTakes = this.commands.blockingTakes({ name: `worker:${queue}` });
    return {
      take: async ({ timeoutSeconds }) => {
        const raw = await takes.takeTask({ queue, workerId, timeoutSeconds });
        return raw === null ? null : parseTask(raw);
      },
      interrupt: () => takes.interrupt(),
      close: () => takes.close(),
    };
  }

  /** The task is done. */
  async ack({ queue, workerId, task, take }: Settling): Promise<Settled> {
    checkName('queue', queue);
    return parseSettled(await this.commands.ackTask({ queue, workerId, task: task.raw, take }));
  }

  /** The task failed: it runs again after a backoff, or is filed as failed when that was its last attempt. */
  async fail({ error, ...settling }: Settling & { error: string }): Promise<Settled> {
    const attempts = settling.task.attempts + 1;
    const again = attempts < settling.task.maxAttempts;
    const backoff = Math.min(this.defaults.backoffMs * 2 ** (attempts - 1), BACKOFF_MAX_MS);
    const delayMs = again ? Math.round(backoff * (0.5 + Math.random() / 2)) : -1;
    return this.putBack(settling, { ...settling.task, attempts }, delayMs, error);
  }

  /** Puts the task back, due in `delayMs`, without counting an attempt (it could not start: a limit was full). */
  async defer({ delayMs, ...settling }: Settling & { delayMs: number }): Promise<Settled> {
    return this.putBack(settling, settling.task, delayMs, '');
  }

  /** Records the worker as alive; returns the workers of the queue quiet for longer than `timeoutMs`. */
  async heartbeat(input: { queue: string; workerId: string; timeoutMs: number }): Promise<string[]> {
    checkName('queue', input.queue);
    return this.commands.heartbeat(input);
  }

  /**
   * Returns a worker's unfinished tasks to the front of the queue and forgets the worker: a dead one (quiet for
   * longer than `timeoutMs`, re-checked atomically; each return counts an attempt) or, with `timeoutMs` -1, one
   * that is stopping. Returns how many went back, 'alive' when the worker turned out to be alive.
   */
  async requeue(input: { queue: string; workerId: string; timeoutMs: number }): Promise<number | 'alive'> {
    checkName('queue', input.queue);
    return this.commands.requeueTasks({ ...input, failedKept: FAILED_KEPT });
  }

  async status({ queue }: { queue: string }): Promise<QueueStatus> {
    checkName('queue', queue);
    return { name: queue, ...(await this.commands.queueSizes({ queue })) };
  }

  /** The newest failed tasks, at most `count` (FAILED_PAGE.max). */
  async failed({ queue, count }: { queue: string; count: number }): Promise<FailedTask[]> {
    checkName('queue', queue);
    checkPage('first', count, FAILED_PAGE.max);
    const entries = await this.commands.failedTasks({ queue, count });
    return entries.map((entry) => {
      const { error, failedAt, task } = JSON.parse(entry) as {
        error: string;
        failedAt: number;
        task: Omit<Task, 'raw'>;
      };
      return { error, failedAt: new Date(failedAt), task };
    });
  }

  /**
   * An operator's retry: the failed task `id` of `queue` goes back to the ready list with all its attempts; false when
   * no failed task has that id (already retried, or beyond the newest FAILED_KEPT).
   */
  async retryFailed({ queue, id }: { queue: string; id: string }): Promise<boolean> {
    if (!NAME.test(queue)) throw badInput('queue', 'letters, digits and _ . : - only, 1 to 128 of them');
    if (!TASK_ID.test(id)) throw badInput('id', 'a task id: letters, digits, _ and - only, 1 to 64 of them');
    return this.commands.retryFailedTask({ queue, id });
  }

  private async putBack(
    { queue, workerId, task, take }: Settling,
    back: Omit<Task, 'raw'>,
    delayMs: number,
    error: string,
  ): Promise<Settled> {
    checkName('queue', queue);
    const settled = await this.commands.retryTask({
      queue,
      workerId,
      taken: task.raw,
      returned: encodeTask(back),
      delayMs,
      error,
      failedKept: FAILED_KEPT,
      take,
    });
    return parseSettled(settled);
  }
}

function encodeTask({ priority, id, name, attempts, maxAttempts, args }: Omit<Task, 'raw'>): string {
  // This key order is the header the scripts match.
  return JSON.stringify({ priority, id, name, attempts, maxAttempts, args });
}

function parseTask(raw: string): Task {
  return { ...(JSON.parse(raw) as Omit<Task, 'raw'>), raw };
}

function parseSettled({ done, taken }: SettledTask): Settled {
  return { done, taken: taken.map(parseTask) };
}
