/**
 * The promote loop on real Redis: it sleeps until the earliest delayed task is due, QUEUE_POLL_MS at most, and the
 * queue's doorbell wakes it when a task is delayed meanwhile (enqueued, retried after a backoff, scheduled as a chat
 * message). A task whose ring is lost still moves: within QUEUE_POLL_MS, or at once when the doorbell connection comes
 * back. An idle worker leaves its delayed tasks alone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { coordinationCommands } from '../../src/redis/coordination/commands.js';
import { keyspace, type Keyspace } from '../../src/redis/keys.js';
import { createLogger } from '../../src/logger.js';
import { startWorker as startProductWorker } from '../../src/worker/start.js';
import { Worker, type TaskHandler, type WorkerOptions } from '../../src/worker/worker.js';
import { keysOf } from '../support/keys.js';
import { eventually, killDoorbells, recordCalls, startTestApp, uniqueName, type TestApp } from '../support/app.js';
import { createChat } from '../support/chats.js';

let t: TestApp;
const log = createLogger('silent');
const workers: Worker[] = [];
/** A fallback sleep no test waits for: a task that runs in time was woken by its ring. */
const MINUTE = 60_000;
/** What "at its due time" allows: generous, since this shared machine pauses now and then. */
const LATE_MS = 5000;

beforeAll(async () => {
  t = await startTestApp();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(100)));
});

const keys = () => keysOf(t.config.keyPrefix);

/** A worker running `handlers`, its promote loop sleeping `pollMs` at most; resolves once it hears the queue's bell. */
async function startWorker(queue: string, handlers: TaskHandler[], pollMs: number): Promise<Worker> {
  const options: WorkerOptions = { concurrency: 4, heartbeatMs: 1000, timeoutMs: 10_000, pollMs };
  const worker = new Worker({ ...t.app.services, handlers, options, log });
  worker.start();
  workers.push(worker);
  await hears(queue);
  return worker;
}

/** Waits until the queue's doorbell has a listener (a ring before that would go to nobody). */
async function hears(queue: string): Promise<void> {
  const bell = keys().queue(queue).bell;
  const nodes = 'nodes' in t.redis ? t.redis.nodes('master') : [t.redis];
  const listeners = async () => {
    let n = 0;
    for (const node of nodes) n += Number(((await node.call('PUBSUB', 'SHARDNUMSUB', bell)) as unknown[])[1]);
    return n;
  };
  expect(await eventually(async () => (await listeners()) > 0)).toBe(true);
}

/** A handler that records when each run of its task started. */
function timed(queue: string, fail = 0): TaskHandler & { runs: number[] } {
  const runs: number[] = [];
  return {
    queue,
    name: 'timed',
    runs,
    run: () => {
      runs.push(performance.now());
      return runs.length <= fail ? Promise.reject(new Error(`failing run ${runs.length}`)) : Promise.resolve();
    },
  };
}

/** The queue's enqueue with the doorbell pointed at a channel nobody listens to: a ring lost on its way. */
async function enqueueSilently(queue: string, delayMs: number): Promise<void> {
  const space = keyspace(t.config.keyPrefix);
  const bell = keys().queue(queue).bell;
  const silenced: Keyspace = {
    ...space,
    key: (...parts) => (space.key(...parts) === bell ? `${bell}:nobody` : space.key(...parts)),
  };
  const task = t.app.services.queues.newTask({ name: 'timed', args: null });
  await coordinationCommands(t.redis, silenced, t.app.services.replicated, log).enqueueTask({ queue, task, delayMs });
}

describe('the promote loop', () => {
  it('leaves the delayed tasks of an idle queue alone between its QUEUE_POLL_MS wake-ups', async () => {
    // First in this file: a doorbell connection that came back (a later test kills it) makes every worker promote.
    const pollMs = t.config.queues.pollMs; // the default
    expect(pollMs).toBeGreaterThanOrEqual(5000);
    const q = uniqueName('idle');
    const delayed = keys().queue(q).delayed;
    const recording = recordCalls(t.redis);
    const touches = () => recording.sent.filter((c) => c.args.includes(delayed)).length;
    try {
      await startWorker(q, [timed(q)], pollMs);
      await expect.poll(touches).toBeGreaterThan(0); // its first promote
      await sleep(1500); // past the second read after the app's doorbell connection came up
      const before = touches();
      await sleep(pollMs / 2);
      expect(touches()).toBe(before);
    } finally {
      recording.stop();
    }
  });

  it('runs a task delayed while the worker sleeps for a minute at its due time', async () => {
    const q = uniqueName('rung');
    const handler = timed(q);
    await startWorker(q, [handler], MINUTE);
    await sleep(200); // asleep, past its first promote
    const enqueuedAt = performance.now();
    await t.app.services.queues.enqueue({ queue: q, name: 'timed', args: null, delayMs: 300 });
    await expect.poll(() => handler.runs.length, { timeout: 300 + LATE_MS }).toBe(1);
    expect(handler.runs[0]! - enqueuedAt).toBeGreaterThanOrEqual(290);
  });

  it('runs a failed task again after its backoff while the worker sleeps for a minute', async () => {
    const q = uniqueName('retried');
    const handler = timed(q, 1);
    await startWorker(q, [handler], MINUTE);
    await t.app.services.queues.enqueue({ queue: q, name: 'timed', args: null });
    // TASK_BACKOFF_MS (1 s) puts the retry 0.5 to 1 s after the failure.
    await expect.poll(() => handler.runs.length, { timeout: t.config.queues.backoffMs + LATE_MS }).toBe(2);
  });

  it('sends a scheduled message at its sendAt while the worker sleeps for a minute', async () => {
    const worker = startProductWorker({
      services: t.app.services,
      config: { queues: { ...t.config.queues, pollMs: MINUTE } },
      log,
    });
    workers.push(worker);
    await hears('scheduled');
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'first');
    const sendAt = new Date(Date.now() + 300);
    const scheduled = await t.gql<{ scheduleMessage: { id: string } }>(
      'mutation($c: ID!, $at: DateTime!) { scheduleMessage(chatId: $c, text: "later", sendAt: $at) { id } }',
      { c: chatId, at: sendAt.toISOString() },
      ann.token,
    );
    expect(scheduled.errors).toBeUndefined();
    const status = async () => {
      const r = await t.gql<{ scheduledMessages: { status: string }[] }>(
        'query($c: ID!) { scheduledMessages(chatId: $c) { status } }',
        { c: chatId },
        ann.token,
      );
      return r.data?.scheduledMessages[0]?.status;
    };
    await expect.poll(status, { timeout: 300 + LATE_MS }).toBe('SENT');
  });

  it('runs a task whose ring was lost within QUEUE_POLL_MS', async () => {
    const q = uniqueName('lost');
    const handler = timed(q);
    await startWorker(q, [handler], 1000);
    await enqueueSilently(q, 200);
    await expect.poll(() => handler.runs.length, { timeout: 1000 + LATE_MS }).toBe(1);
  });

  it('promotes at once when its doorbell connection comes back: a ring sent while it was down may be lost', async () => {
    const q = uniqueName('resync');
    const handler = timed(q);
    await startWorker(q, [handler], MINUTE);
    await sleep(200); // asleep, past its first promote
    await enqueueSilently(q, 300); // as if rung while the connection was down
    expect(await killDoorbells(t)).toBeGreaterThan(0);
    await expect.poll(() => handler.runs.length, { timeout: 300 + LATE_MS }).toBe(1);
  });
});
