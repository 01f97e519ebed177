/**
 * Reliable task queues (the book's chapter 6 FIFO, priority and delayed queues, without its defects): a worker takes
 * a task into its own active list and removes it when done, so a dead worker's tasks come back; failures retry with
 * backoff, then are filed as failed; due delayed tasks move in one script. Details: docs/coordination.md.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/coordination/commands.js';
import type { CoordinationKeys } from '../../redis/coordination/keys.js';
import { checkMs, checkName } from '../shared/arguments.js';

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

export interface EnqueueOptions {
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /** Higher runs first; default 0. */
  priority?: number;
  maxAttempts?: number;
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

/** Failed tasks kept per queue, newest first. */
export const FAILED_KEPT = 1000;
const PRIORITY_MAX = 1_000_000;
const BACKOFF_MAX_MS = 3_600_000;
/** Due tasks one promote call moves at most (a poller calls again at once when it moved this many). */
export const PROMOTE_BATCH = 1000;

export class QueueService {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: CoordinationKeys,
    private readonly defaults: QueueDefaults,
  ) {}

  /** The task as stored, ready for a script that enqueues it (scheduling does so with its own record). */
  newTask(
    name: string,
    args: unknown,
    { priority = 0, maxAttempts = this.defaults.maxAttempts }: EnqueueOptions = {},
  ): string {
    checkName('task', name);
    if (!Number.isSafeInteger(priority) || Math.abs(priority) > PRIORITY_MAX)
      throw new Error(`priority must be an integer within ±${PRIORITY_MAX}`);
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) throw new Error(`maxAttempts must be an integer ≥ 1`);
    return encodeTask({ priority, id: randomBytes(9).toString('base64url'), name, attempts: 0, maxAttempts, args });
  }

  /** Adds a task; returns its id. */
  async enqueue(queue: string, name: string, args: unknown, options: EnqueueOptions = {}): Promise<string> {
    checkName('queue', queue);
    const delayMs = options.delayMs ?? 0;
    checkMs('delayMs', delayMs, 0);
    const raw = this.newTask(name, args, options);
    await commands.enqueueTask(this.redis, this.keys, { queue, task: raw, delayMs });
    return parseTask(raw).id;
  }

  /** Moves due delayed tasks to the ready list; returns how many, and ms until the next is due (-1: none). */
  async promote(queue: string, max = PROMOTE_BATCH): Promise<{ moved: number; nextDueMs: number }> {
    checkName('queue', queue);
    return commands.promoteTasks(this.redis, this.keys, { queue, max });
  }

  /** Moves up to `max` ready tasks to the worker's active list, without waiting; the first to run comes first. */
  async takeReady(queue: string, workerId: string, max: number): Promise<Task[]> {
    checkName('queue', queue);
    return (await commands.takeTasks(this.redis, this.keys, { queue, workerId, max })).map(parseTask);
  }

  /**
   * Waits up to `timeoutSeconds` for a ready task and moves it to the worker's active list. `blocking` must be a
   * connection of its own (BLMOVE holds it).
   */
  async take(blocking: RedisClient, queue: string, workerId: string, timeoutSeconds: number): Promise<Task | null> {
    const q = this.queueKeys(queue);
    const raw = await blocking.blmove(q.ready, q.active(workerId), 'LEFT', 'LEFT', timeoutSeconds);
    return raw === null ? null : parseTask(raw);
  }

  /** The task is done; false when it was no longer the worker's (returned to the queue when it was taken for dead). */
  async ack(queue: string, workerId: string, task: Task): Promise<boolean> {
    return (await this.redis.lrem(this.queueKeys(queue).active(workerId), 1, task.raw)) === 1;
  }

  /** The task failed: it runs again after a backoff, or is filed as failed when that was its last attempt. */
  async fail(queue: string, workerId: string, task: Task, error: string): Promise<boolean> {
    const attempts = task.attempts + 1;
    const again = attempts < task.maxAttempts;
    const backoff = Math.min(this.defaults.backoffMs * 2 ** (attempts - 1), BACKOFF_MAX_MS);
    const delayMs = again ? Math.round(backoff * (0.5 + Math.random() / 2)) : -1;
    return this.putBack(queue, workerId, task, { ...task, attempts }, delayMs, error);
  }

  /** Puts the task back, due in `delayMs`, without counting an attempt (it could not start: a limit was full). */
  async defer(queue: string, workerId: string, task: Task, delayMs: number): Promise<boolean> {
    return this.putBack(queue, workerId, task, task, delayMs, '');
  }

  /** Records the worker as alive; returns the workers of the queue quiet for longer than `timeoutMs`. */
  async heartbeat(queue: string, workerId: string, timeoutMs: number): Promise<string[]> {
    checkName('queue', queue);
    return commands.heartbeat(this.redis, this.keys, { queue, workerId, timeoutMs });
  }

  /**
   * Returns a worker's unfinished tasks to the front of the queue and forgets the worker: a dead one (quiet for
   * longer than `timeoutMs`, re-checked atomically; each return counts an attempt) or, with `timeoutMs` -1, one
   * that is stopping. Returns how many went back, 'alive' when the worker turned out to be alive.
   */
  async requeue(queue: string, workerId: string, timeoutMs: number): Promise<number | 'alive'> {
    checkName('queue', queue);
    return commands.requeueTasks(this.redis, this.keys, { queue, workerId, timeoutMs, failedKept: FAILED_KEPT });
  }

  async status(queue: string): Promise<QueueStatus> {
    const q = this.queueKeys(queue);
    const workers = await this.redis.zrange(q.workers, '0', '-1');
    const [ready, delayed, failed, ...running] = await Promise.all([
      this.redis.llen(q.ready),
      this.redis.zcard(q.delayed),
      this.redis.llen(q.failed),
      ...workers.map((w) => this.redis.llen(q.active(w))),
    ]);
    return { name: queue, ready, delayed, failed, running: running.reduce((a, b) => a + b, 0) };
  }

  /** The newest failed tasks, at most `count`. */
  async failed(queue: string, count: number): Promise<FailedTask[]> {
    const entries = await this.redis.lrange(this.queueKeys(queue).failed, 0, count - 1);
    return entries.map((entry) => {
      const { error, failedAt, task } = JSON.parse(entry) as {
        error: string;
        failedAt: number;
        task: Omit<Task, 'raw'>;
      };
      return { error, failedAt: new Date(failedAt), task };
    });
  }

  private async putBack(
    queue: string,
    workerId: string,
    taken: Task,
    back: Omit<Task, 'raw'>,
    delayMs: number,
    error: string,
  ): Promise<boolean> {
    checkName('queue', queue);
    return commands.retryTask(this.redis, this.keys, {
      queue,
      workerId,
      taken: taken.raw,
      returned: encodeTask(back),
      delayMs,
      error,
      failedKept: FAILED_KEPT,
    });
  }

  private queueKeys(queue: string) {
    checkName('queue', queue);
    return this.keys.queue(queue);
  }
}

function encodeTask({ priority, id, name, attempts, maxAttempts, args }: Omit<Task, 'raw'>): string {
  // This key order is the header the scripts match.
  return JSON.stringify({ priority, id, name, attempts, maxAttempts, args });
}

function parseTask(raw: string): Task {
  return { ...(JSON.parse(raw) as Omit<Task, 'raw'>), raw };
}
