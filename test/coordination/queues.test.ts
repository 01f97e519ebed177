/**
 * Task queues and the worker on real Redis: the book's delayed-task test, priorities, two pollers racing,
 * retries with backoff into the failed list, a dead worker's tasks coming back, a global concurrency limit,
 * and a graceful stop that returns unfinished tasks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { disposeLater } from '../support/dispose.js';
import { keysOf } from '../support/keys.js';
import { freePort, startRedisProcess } from '../support/redis-servers.js';
import { startTestServices } from '../support/services.js';
import type { QueueService } from '../../src/services/coordination/queues.js';
import { Worker, type TaskHandler, type WorkerOptions } from '../../src/worker/worker.js';
import { eventually, startTestApp, uniqueName, type TestApp } from '../support/app.js';

let t: TestApp;
const log = createLogger('silent');
const workers: Worker[] = [];
const FAST: WorkerOptions = { concurrency: 4, heartbeatMs: 100, timeoutMs: 500, pollMs: 20 };

beforeAll(async () => {
  t = await startTestApp();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(100)));
});

const queues = () => t.app.services.queues;
const keys = () => keysOf(t.config.keyPrefix);

function startWorker(handlers: TaskHandler[], options: Partial<WorkerOptions> = {}): Worker {
  const worker = new Worker({ ...t.app.services, handlers, options: { ...FAST, ...options }, log });
  worker.start();
  workers.push(worker);
  return worker;
}

async function readyTasks(queue: string): Promise<{ id: string; priority: number; args: unknown }[]> {
  const raw = await t.redis.lrange(keys().queue(queue).ready, 0, -1);
  return raw.map((r) => JSON.parse(r) as { id: string; priority: number; args: unknown });
}

/** How many of the queue's delayed tasks are due by Redis's clock (what a promote moves). */
async function due(queue: string): Promise<number> {
  const [seconds, micros] = await t.redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  return t.redis.zcount(keys().queue(queue).delayed, '-inf', now);
}

describe('queues', () => {
  it("passes the book's test: delays of 0, 0.5, 0 and 1.5 s make two tasks ready at once and four once due", async () => {
    const q = uniqueName('book');
    for (const delay of [0, 500, 0, 1500])
      await queues().enqueue({ queue: q, name: 'task', args: { delay }, delayMs: delay });
    await queues().promote({ queue: q });
    expect(await t.redis.llen(keys().queue(q).ready)).toBe(2);
    expect(await eventually(async () => (await due(q)) === 2)).toBe(true);
    await queues().promote({ queue: q });
    expect(await t.redis.llen(keys().queue(q).ready)).toBe(4);
    expect(await t.redis.zcard(keys().queue(q).delayed)).toBe(0);
  });

  it('runs higher priorities first, first in first out within one, due delayed tasks ahead of their priority', async () => {
    const q = uniqueName('prio');
    for (const [label, priority] of [
      ['a0', 0],
      ['a5', 5],
      ['b0', 0],
      ['b5', 5],
      ['m1', -1],
      ['c0', 0],
    ] as const) {
      await queues().enqueue({ queue: q, name: 'task', args: label, priority });
    }
    await queues().enqueue({ queue: q, name: 'task', args: 'late0', priority: 0, delayMs: 50 });
    await queues().enqueue({ queue: q, name: 'task', args: 'late9', priority: 9, delayMs: 50 });
    expect(await eventually(async () => (await due(q)) === 2)).toBe(true);
    expect((await queues().promote({ queue: q })).moved).toBe(2);
    expect((await readyTasks(q)).map((x) => x.args)).toEqual(['late9', 'a5', 'b5', 'late0', 'a0', 'b0', 'c0', 'm1']);

    const order: unknown[] = [];
    startWorker([{ queue: q, name: 'task', run: (args) => Promise.resolve(void order.push(args)) }], {
      concurrency: 1,
    });
    expect(await eventually(() => Promise.resolve(order.length === 8))).toBe(true);
    expect(order).toEqual(['late9', 'a5', 'b5', 'late0', 'a0', 'b0', 'c0', 'm1']);
  });

  it('moves each of 1000 due tasks exactly once when two pollers race', async () => {
    const q = uniqueName('race');
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) => queues().enqueue({ queue: q, name: 'task', args: i, delayMs: 200 })),
    );
    const second = startTestServices({ KEY_PREFIX: t.config.keyPrefix }).services.queues; // another process's
    expect(await eventually(async () => (await due(q)) === 1000)).toBe(true);
    const poll = async (service: QueueService) => {
      let moved = 0;
      for (;;) {
        const r = await service.promote({ queue: q, max: 25 });
        if (r.moved === 0) return moved;
        moved += r.moved;
      }
    };
    const [a, b] = await Promise.all([poll(queues()), poll(second)]);
    expect(a + b).toBe(1000);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    const ready = await readyTasks(q);
    expect(ready).toHaveLength(1000);
    expect(new Set(ready.map((x) => x.args)).size).toBe(1000);
  });

  it('retries a failing task with backoff, then files it as failed with the error', async () => {
    const q = uniqueName('fail');
    let runs = 0;
    let flaky = 0;
    startWorker([
      { queue: q, name: 'always', run: () => Promise.reject(new Error(`boom ${++runs}`)) },
      { queue: q, name: 'flaky', run: () => (++flaky < 3 ? Promise.reject(new Error('not yet')) : Promise.resolve()) },
    ]);
    const { queues: slow } = startTestServices({
      KEY_PREFIX: t.config.keyPrefix,
      TASK_MAX_ATTEMPTS: '3',
      TASK_BACKOFF_MS: '50',
    }).services;
    await slow.enqueue({ queue: q, name: 'always', args: null });
    await slow.enqueue({ queue: q, name: 'flaky', args: null });
    expect(await eventually(async () => (await queues().status({ queue: q })).failed === 1, 10_000)).toBe(true);
    expect(runs).toBe(3);
    const [failed] = await queues().failed({ queue: q, count: 10 });
    expect(failed).toMatchObject({ error: 'boom 3', task: { name: 'always', attempts: 3, maxAttempts: 3 } });
    expect(await eventually(async () => flaky === 3 && (await queues().status({ queue: q })).running === 0)).toBe(true);
    expect(await queues().status({ queue: q })).toEqual({ name: q, ready: 0, delayed: 0, running: 0, failed: 1 });
  });

  it("returns a dead worker's tasks to the queue, counting an attempt", async () => {
    const q = uniqueName('dead');
    await queues().enqueue({ queue: q, name: 'task', args: 'orphan' });
    // A worker takes the task, heartbeats once, and dies.
    const ghost = queues().consumer({ queue: q, workerId: 'ghost' });
    const taken = await ghost.take({ timeoutSeconds: 1 });
    await ghost.close();
    expect(taken?.args).toBe('orphan');
    await queues().heartbeat({ queue: q, workerId: 'ghost', timeoutMs: 500 });
    expect((await queues().status({ queue: q })).running).toBe(1);

    const attempts: number[] = [];
    startWorker([{ queue: q, name: 'task', run: (_args, ctx) => Promise.resolve(void attempts.push(ctx.attempt)) }]);
    expect(await eventually(() => Promise.resolve(attempts.length === 1), 10_000)).toBe(true);
    expect(attempts).toEqual([2]);
    expect(await t.redis.zscore(keys().queue(q).workers, 'ghost')).toBeNull();
  });

  it('holds a per-type concurrency limit across workers', async () => {
    const q = uniqueName('limit');
    let inside = 0;
    let most = 0;
    let done = 0;
    const handler: TaskHandler = {
      queue: q,
      name: 'limited',
      concurrency: 2,
      run: async () => {
        most = Math.max(most, ++inside);
        await sleep(30);
        inside--;
        done++;
      },
    };
    for (let i = 0; i < 3; i++) startWorker([handler], { concurrency: 4 });
    await Promise.all(Array.from({ length: 30 }, (_, i) => queues().enqueue({ queue: q, name: 'limited', args: i })));
    expect(await eventually(() => Promise.resolve(done === 30), 20_000)).toBe(true);
    expect(most).toBe(2);
  });

  it('stops gracefully: running tasks get the grace period, then go back to the queue', async () => {
    const q = uniqueName('stop');
    let finished = 0;
    let started = 0;
    // Both slots busy: the consumer is waiting for a free one when the stop comes.
    const worker = startWorker(
      [
        {
          queue: q,
          name: 'slow',
          run: async (args, ctx) => {
            started++;
            await sleep(args === 'medium' ? 200 : 10_000, undefined, { signal: ctx.signal }).catch(() => undefined);
            if (!ctx.signal.aborted) finished++;
          },
        },
      ],
      { concurrency: 2 },
    );
    for (const args of ['medium', 'long', 'longer']) await queues().enqueue({ queue: q, name: 'slow', args: args });
    expect(await eventually(() => Promise.resolve(started === 3))).toBe(true);
    await worker.stop(1000);
    expect(finished).toBe(1); // the medium one finished; the others were stopped when the grace period ended
    expect(await readyTasks(q)).toMatchObject([{ args: 'long' }, { args: 'longer' }]);
    expect(await queues().status({ queue: q })).toEqual({ name: q, ready: 2, delayed: 0, running: 0, failed: 0 });
    expect(await t.redis.zcard(keys().queue(q).workers)).toBe(0);
  });

  it('stops at once when Redis has just gone away, its waiting take queued in a reconnecting client', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-worker-'));
    disposeLater(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const redis = await startRedisProcess(dir, await freePort());
    disposeLater(() => redis.stop());
    const { services } = startTestServices({
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      REDIS_CLUSTER_NODES: '',
    });
    const q = uniqueName('away');
    const worker = new Worker({
      ...services,
      handlers: [{ queue: q, name: 'x', run: () => Promise.resolve() }],
      options: FAST,
      log,
    });
    worker.start();
    // Nothing is ready: the consumer waits in BLMOVE.
    const observer = new Redis(redis.port, '127.0.0.1');
    expect(await eventually(async () => String(await observer.client('LIST')).includes('cmd=blmove'))).toBe(true);
    observer.disconnect();
    await redis.stop(); // SIGKILL: ioredis queues the BLMOVE again and waits to reconnect
    const outcome = await Promise.race([
      worker.stop(100).then(() => 'stopped'),
      sleep(8000).then(() => 'still stopping after 8 s'),
    ]);
    expect(outcome).toBe('stopped');
  });
});

describe('the worker process', () => {
  it('needs REDIS_URL, REDIS_CLUSTER_NODES or a running gateway', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/worker/main.ts'], {
      env: { PATH: process.env.PATH ?? '', DATA_DIR: `/tmp/${uniqueName('nowhere')}` },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no embedded Redis is running.*start the gateway first/);
  });
});
