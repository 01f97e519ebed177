/**
 * The task worker: for each queue it has handlers for, a consumer (up to `concurrency` tasks at once: free slots
 * are filled in one script call, and when nothing is ready it waits with BLMOVE on a connection of its own; a slot
 * whose task settles takes the next ready task in the same call, so a busy queue costs one round trip a task), a
 * promote loop that moves due delayed tasks (it sleeps until the earliest is due, woken sooner by the queue's doorbell
 * when a task is delayed), and a heartbeat that also returns the tasks of workers that stopped heartbeating. A
 * handler with a `concurrency` limit runs under a semaphore shared by every worker. Periodic jobs (the counter
 * cleaner) run under a lock, one worker at a time (RedLock when REDLOCK_NODES is set). `stop()` stops taking tasks, gives running ones a grace period,
 * and returns what is left to the queue.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  PROMOTE_BATCH,
  type QueueConsumer,
  type QueueService,
  type Settled,
  type Task,
} from '../services/coordination/queues.js';
import { AppError } from '../errors.js';
import type { JobLocks } from '../services/coordination/redlock.js';
import type { SemaphoreService } from '../services/coordination/semaphores.js';
import type { PeriodicJob, TaskHandler } from '../services/shared/domain.js';

export type { PeriodicJob, TaskContext, TaskHandler } from '../services/shared/domain.js';

export interface WorkerOptions {
  /** Tasks of one queue this worker runs at once. */
  concurrency: number;
  heartbeatMs: number;
  /** A worker quiet for longer counts as dead and its tasks go back to their queues. */
  timeoutMs: number;
  /** The promote loop's longest sleep when no ring says otherwise: the most a lost ring delays a delayed task. */
  pollMs: number;
}

/** BLMOVE waits at most this long, so a consumer notices a lost connection. */
const TAKE_TIMEOUT_SECONDS = 5;
/** A task whose concurrency limit is full waits this long (jittered) before it is offered again. */
const LIMIT_RETRY_MS = 200;
/** After an error, a consumer or poller waits this long before trying again. */
const ERROR_PAUSE_MS = 1000;
/** A periodic job's lock lease, kept alive while the job runs (RedLock shortens it to REDLOCK_MAX_LEASE_MS). */
const JOB_LEASE_MS = 30_000;

export interface WorkerDeps {
  queues: QueueService;
  semaphores: SemaphoreService;
  /** The periodic jobs' locks: the plain lock, or RedLock when REDLOCK_NODES is set. */
  jobLocks: JobLocks;
  handlers: TaskHandler[];
  jobs?: PeriodicJob[];
  options: WorkerOptions;
  log: Logger;
}

/** Settles a task (acknowledges, retries or files it), taking up to `take` ready tasks in its place. */
type Settle = (take: number) => Promise<Settled>;

export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly handlers = new Map<string, Map<string, TaskHandler>>();
  private readonly running = new Set<Promise<void>>();
  private readonly consumers: QueueConsumer[] = [];
  private readonly loops: Promise<void>[] = [];
  /** Acknowledgements and returns that failed (Redis away); retried on every heartbeat, and at stop. */
  private unsettled: Settle[] = [];
  private readonly stopping = new AbortController();
  private readonly abortTasks = new AbortController();
  private heartbeat: NodeJS.Timeout | undefined;
  /** Whether the last beat failed (its failure was logged; the next that succeeds says so). */
  private beatFailing = false;
  private stopped: Promise<void> | undefined;

  private readonly queues: QueueService;
  private readonly semaphores: SemaphoreService;
  private readonly jobLocks: JobLocks;
  private readonly jobs: PeriodicJob[];
  private readonly options: WorkerOptions;
  private readonly log: Logger;

  constructor(deps: WorkerDeps) {
    ({
      queues: this.queues,
      semaphores: this.semaphores,
      jobLocks: this.jobLocks,
      options: this.options,
      log: this.log,
    } = deps);
    this.jobs = deps.jobs ?? [];
    for (const h of deps.handlers) {
      const byName = this.handlers.get(h.queue) ?? new Map<string, TaskHandler>();
      if (byName.has(h.name)) throw new Error(`two handlers for task "${h.name}" on queue "${h.queue}"`);
      this.handlers.set(h.queue, byName.set(h.name, h));
    }
  }

  start(): void {
    for (const [queue, byName] of this.handlers) {
      const consumer = this.queues.consumer({ queue, workerId: this.id });
      this.consumers.push(consumer);
      this.loops.push(this.consume(queue, byName, consumer), this.promote(queue));
    }
    for (const job of this.jobs) this.loops.push(this.periodic(job));
    void this.beat();
    this.heartbeat = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.log.info(
      {
        worker: this.id,
        queues: [...this.handlers.keys()],
        jobs: this.jobs.map((j) => j.name),
        concurrency: this.options.concurrency,
      },
      'worker started',
    );
  }

  /** Stops taking tasks, waits up to `graceMs` for running ones, returns the rest to their queues. */
  stop(graceMs: number): Promise<void> {
    this.stopped ??= this.shutdown(graceMs);
    return this.stopped;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.stopping.abort();
    clearInterval(this.heartbeat);
    for (const c of this.consumers) c.interrupt(); // ends a pending BLMOVE
    await Promise.all(this.loops);
    const finished = await Promise.race([Promise.all(this.running).then(() => true), sleep(graceMs).then(() => false)]);
    if (!finished) this.abortTasks.abort(new Error('the worker is stopping'));
    await this.settleAll();
    // Every queue at once: with Redis away, each return waits out the client's retries.
    await Promise.all(
      [...this.handlers.keys()].map(async (queue) => {
        try {
          const returned = await this.queues.requeue({ queue, workerId: this.id, timeoutMs: -1 });
          if (returned !== 'alive' && returned > 0)
            this.log.info({ worker: this.id, queue, returned }, 'returned unfinished tasks to the queue');
        } catch (err) {
          this.log.warn(
            { worker: this.id, queue, err },
            'could not return unfinished tasks; they go back once this worker counts as dead',
          );
        }
      }),
    );
    await Promise.all(this.consumers.map((c) => c.close()));
    this.log.info({ worker: this.id }, 'worker stopped');
  }

  private async consume(queue: string, byName: Map<string, TaskHandler>, consumer: QueueConsumer): Promise<void> {
    const slots = new Set<Promise<void>>();
    while (!this.stopping.signal.aborted) {
      if (slots.size >= this.options.concurrency) {
        await this.untilStop(Promise.race(slots), undefined);
        continue;
      }
      let tasks: Task[];
      try {
        // A stop does not wait for the take: ioredis never settles a command queued while a client it then
        // disconnects was reconnecting. Tasks a late take moves to this worker are returned by the stop's requeue.
        const taking = this.take(queue, consumer, this.options.concurrency - slots.size);
        taking.catch(() => undefined);
        tasks = await this.untilStop(taking, []);
      } catch (err) {
        if (this.stopping.signal.aborted) break;
        this.log.warn({ worker: this.id, queue, err }, 'taking a task failed');
        await this.pause(ERROR_PAUSE_MS);
        continue;
      }
      for (const task of tasks) {
        const run: Promise<void> = this.slot(queue, byName, task).finally(() => {
          slots.delete(run);
          this.running.delete(run);
        });
        slots.add(run);
        this.running.add(run);
      }
    }
  }

  /**
   * `promise`'s outcome, or `onStop` once a stop is asked, whichever comes first. It leaves nothing behind on the
   * stop signal: a Promise.race with a promise of the stop would keep a reaction on it per call (a few hundred bytes
   * a task for as long as the worker lives).
   */
  private untilStop<T>(promise: Promise<T>, onStop: T): Promise<T> {
    const { signal } = this.stopping;
    if (signal.aborted) return Promise.resolve(onStop);
    return new Promise<T>((resolve, reject) => {
      const stop = () => resolve(onStop);
      signal.addEventListener('abort', stop, { once: true });
      promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
    });
  }

  /** Fills up to `free` slots in one round trip; waits with BLMOVE only when nothing is ready. */
  private async take(queue: string, consumer: QueueConsumer, free: number): Promise<Task[]> {
    const ready = await this.queues.takeReady({ queue, workerId: this.id, max: free });
    if (ready.length > 0) return ready;
    const task = await consumer.take({ timeoutSeconds: TAKE_TIMEOUT_SECONDS });
    return task ? [task] : [];
  }

  /**
   * Runs `task`, then each task its settling took in its place, until a settling takes none (the queue is empty:
   * the consumer takes again) or the worker stops. A task taken as the stop came stays on the worker's list, and the
   * stop's requeue returns it.
   */
  private async slot(queue: string, byName: Map<string, TaskHandler>, task: Task): Promise<void> {
    for (let next: Task | undefined = task; next && !this.stopping.signal.aborted;)
      next = await this.run(queue, byName.get(next.name), next);
  }

  /** Runs `task` and settles it; the task taken in its place, if any. */
  private async run(queue: string, handler: TaskHandler | undefined, task: Task): Promise<Task | undefined> {
    const taken = { queue, workerId: this.id, task };
    if (!handler) {
      const error = `no handler for task "${task.name}" on queue "${queue}"`;
      return this.settle((take) => this.queues.fail({ ...taken, take, error }));
    }
    const limit = handler.concurrency;
    const place = { name: `task:${task.name}`, holder: `${this.id}:${task.id}` };
    const timeoutMs = this.options.timeoutMs;
    if (limit !== undefined) {
      const admitted = await this.semaphores.acquire({ ...place, limit, timeoutMs }).catch(() => null);
      if (!admitted) {
        const delayMs = Math.round(LIMIT_RETRY_MS * (0.5 + Math.random()));
        return this.settle((take) => this.queues.defer({ ...taken, take, delayMs }));
      }
    }
    const refresh =
      limit === undefined
        ? undefined
        : setInterval(() => {
            this.semaphores
              .refresh({ ...place, timeoutMs })
              .catch((err: unknown) => this.log.warn({ task: task.id, err }, 'semaphore refresh failed'));
          }, this.options.timeoutMs / 3);
    let failure: string | undefined;
    try {
      await handler.run(task.args, { taskId: task.id, attempt: task.attempts + 1, signal: this.abortTasks.signal });
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
      this.log.warn(
        { worker: this.id, queue, task: task.id, name: task.name, attempt: task.attempts + 1, err },
        'task failed',
      );
    } finally {
      clearInterval(refresh);
      if (limit !== undefined) await this.semaphores.release(place).catch(() => false); // else it times out
    }
    return this.settle((take) =>
      failure === undefined
        ? this.queues.ack({ ...taken, take })
        : this.queues.fail({ ...taken, take, error: failure }),
    );
  }

  /**
   * Moves due delayed tasks, then sleeps until the next is due (`pollMs` at most). A task delayed meanwhile rings
   * the queue's doorbell with its due time, which brings the wake-up forward; a ring that may have been lost (the
   * doorbell connection came back) wakes it at once, and `pollMs` bounds what a ring lost otherwise delays.
   */
  private async promote(queue: string): Promise<void> {
    const alarm = new Alarm(this.stopping.signal);
    const unwatch = this.queues.watchDelayed(
      { queue },
      { rung: (dueAtMs) => alarm.ring(dueAtMs), missed: () => alarm.ring(-Infinity) },
    );
    while (!this.stopping.signal.aborted) {
      let wait = this.options.pollMs;
      alarm.promoting();
      try {
        const { moved, nextDueMs, nowMs } = await this.queues.promote({ queue });
        alarm.clock(nowMs);
        if (moved >= PROMOTE_BATCH) continue;
        if (nextDueMs >= 0) wait = Math.min(wait, nextDueMs);
      } catch (err) {
        this.log.warn({ worker: this.id, queue, err }, 'moving due tasks failed');
        wait = ERROR_PAUSE_MS;
      }
      await alarm.sleep(wait);
    }
    unwatch();
  }

  /** Runs `job` every `everyMs` unless another worker is running it. */
  private async periodic(job: PeriodicJob): Promise<void> {
    for (;;) {
      await this.pause(job.everyMs);
      if (this.stopping.signal.aborted) return;
      try {
        await this.jobLocks.withLock({ name: `job:${job.name}`, leaseMs: JOB_LEASE_MS }, (signal) =>
          job.run(AbortSignal.any([signal, this.abortTasks.signal])),
        );
      } catch (err) {
        if (AppError.is(err) && err.code === 'BUSY') continue; // another worker has it
        this.log.warn({ worker: this.id, job: job.name, err }, 'periodic job failed');
      }
    }
  }

  /** Says this worker is alive on each queue, and returns the tasks of workers that are not. */
  private async beat(): Promise<void> {
    let failed = false;
    for (const queue of this.handlers.keys()) {
      try {
        const { timeoutMs } = this.options;
        const dead = await this.queues.heartbeat({ queue, workerId: this.id, timeoutMs });
        for (const worker of dead) {
          const returned = await this.queues.requeue({ queue, workerId: worker, timeoutMs });
          if (returned !== 'alive')
            this.log.warn(
              { worker: this.id, queue, dead: worker, returned },
              'returned the tasks of a worker that stopped heartbeating',
            );
        }
      } catch (err) {
        // Once per outage (Redis away fails every queue's beat, every WORKER_HEARTBEAT_MS), and once when it ends.
        if (!this.beatFailing) this.log.warn({ worker: this.id, queue, err }, 'heartbeat failed');
        this.beatFailing = failed = true;
      }
    }
    if (this.beatFailing && !failed) {
      this.beatFailing = false;
      this.log.info({ worker: this.id }, 'heartbeat restored');
    }
    await this.settleAll();
  }

  /**
   * Runs an acknowledgement or return, taking `take` ready tasks in the task's place (one, unless the worker is
   * stopping); the task taken, if any. When Redis is away, keeps the step to run again later, taking nothing then (no
   * slot waits for it).
   */
  private async settle(step: Settle, take = this.stopping.signal.aborted ? 0 : 1): Promise<Task | undefined> {
    try {
      return (await step(take)).taken[0];
    } catch (err) {
      this.log.warn({ worker: this.id, err }, 'could not settle a task; will retry');
      this.unsettled.push(step);
      return undefined;
    }
  }

  private async settleAll(): Promise<void> {
    const steps = this.unsettled;
    this.unsettled = [];
    await Promise.all(steps.map((step) => this.settle(step, 0)));
  }

  private pause(ms: number): Promise<void> {
    return sleep(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}

/**
 * The promote loop's sleep, which a ring brings forward. Due times are on Redis's clock, the sleep on this process's:
 * each promote tells Redis's clock as it ran, and a ring's due time is converted with that offset. The offset is
 * taken when the reply arrives, after the script ran, so a converted wake-up errs late by the reply's latency, never
 * early (an early wake would find nothing due and cost a promote).
 */
class Alarm {
  /** Redis's clock minus performance.now(), as of the last promote; undefined before the first succeeded. */
  private offset: number | undefined;
  /** The earliest due time rung since the current promote began: it may have run before that task was added. */
  private rung = Infinity;
  /** When the current sleep ends, on Redis's clock (Infinity: not sleeping, or the clock is unknown). */
  private until = Infinity;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly signal: AbortSignal) {}

  /** A promote begins: it sees every task delayed before it, so only rings from now on count. */
  promoting(): void {
    this.rung = Infinity;
  }

  /** The promote's reply said Redis's clock was `nowMs` as it ran. */
  clock(nowMs: number): void {
    this.offset = nowMs - performance.now();
  }

  /** A task is due at `dueAtMs` (Redis's clock; -Infinity: wake now): the sleep ends by then. */
  ring(dueAtMs: number): void {
    this.rung = Math.min(this.rung, dueAtMs);
    if (this.wake && dueAtMs < this.until) this.set(dueAtMs);
  }

  /** Sleeps `ms`, or until a due time rung since the promote began, or until the worker stops. */
  sleep(ms: number): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.timer);
        this.signal.removeEventListener('abort', done);
        this.wake = undefined;
        this.until = Infinity;
        resolve();
      };
      this.wake = done;
      this.signal.addEventListener('abort', done, { once: true });
      this.until = this.offset === undefined ? Infinity : performance.now() + this.offset + ms;
      this.timer = setTimeout(done, ms);
      if (this.rung < this.until) this.set(this.rung);
    });
  }

  /** Ends the sleep at `dueAtMs` (Redis's clock), at once when the clock is unknown. */
  private set(dueAtMs: number): void {
    this.until = dueAtMs;
    clearTimeout(this.timer);
    const ms = this.offset === undefined ? 0 : Math.max(0, dueAtMs - this.offset - performance.now());
    this.timer = setTimeout(() => this.wake?.(), ms);
  }
}
