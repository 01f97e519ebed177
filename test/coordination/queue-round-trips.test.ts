/**
 * A busy worker's round trips, on a Redis of this file's own (of the project's kind) with SLOWLOG logging every
 * command: a task settling takes the next ready task in the same call, so the worker takes from the queue once,
 * not once a task; a stopping worker's settling takes nothing; a task so taken by a worker that then dies comes back
 * through the usual recovery.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { Worker, type TaskHandler, type WorkerOptions } from '../../src/worker/worker.js';
import { eventually, uniqueName } from '../support/app.js';
import { keysOf } from '../support/keys.js';
import { startCluster, startStandalone, type RunningRedis } from '../support/redis-servers.js';
import { startTestServices, type TestServices } from '../support/services.js';

const log = createLogger('silent');
/** Heartbeats and promotes far apart: what the worker sends during a test is its takes and settlings. */
const QUIET: WorkerOptions = { concurrency: 1, heartbeatMs: 60_000, timeoutMs: 120_000, pollMs: 60_000 };
const SLOWLOG_LEN = 10_000;
/** Commands a worker sends on a queue besides one a task: its start's, and its takes once the queue ran dry. */
const ROUND_TRIPS_BESIDES = 8;

let own: RunningRedis;
let s: TestServices;
/** One connection to each server (the masters: the cluster has no replicas). */
let servers: Redis[];
const workers: Worker[] = [];

beforeAll(async () => {
  own = inject('redis').kind === 'cluster' ? await startCluster() : await startStandalone();
  s = startTestServices({}, undefined, own.target);
  servers = own.ports.map((port) => new Redis(port, '127.0.0.1', { connectionName: 'observer' }));
  for (const server of servers) {
    await server.config('SET', 'slowlog-log-slower-than', '0');
    await server.config('SET', 'slowlog-max-len', String(SLOWLOG_LEN));
  }
}, 60_000);

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(100)));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.quit()));
  await own.stop();
});

const queues = () => s.services.queues;
const keys = () => keysOf(s.config.keyPrefix);

function startWorker(handlers: TaskHandler[], options: Partial<WorkerOptions> = {}): Worker {
  const worker = new Worker({ ...s.services, handlers, options: { ...QUIET, ...options }, log });
  worker.start();
  workers.push(worker);
  return worker;
}

interface Logged {
  /** The command and its arguments, as SLOWLOG keeps them. */
  args: string[];
  /** False for a command a script called. */
  sent: boolean;
}

/** Forgets what the servers logged so far. */
async function resetLog(): Promise<void> {
  for (const server of servers) await server.slowlog('RESET');
}

/** The commands every server ran since the last reset that name one of `queue`'s keys, oldest first. */
async function logged(queue: string): Promise<Logged[]> {
  const entries: [number, Logged][] = [];
  for (const server of servers) {
    const raw = (await server.slowlog('GET', SLOWLOG_LEN)) as [number, number, number, string[], string, string][];
    for (const [id, , , args, client] of raw)
      if (args.some((a) => a.includes(queue))) entries.push([id, { args: args.map(String), sent: client !== '?:0' }]);
  }
  if (entries.length >= SLOWLOG_LEN) throw new Error('the slowlog is full: raise SLOWLOG_LEN');
  return entries.sort(([a], [b]) => a - b).map(([, e]) => e);
}

/** What clients sent on `queue`'s keys since the last reset, but the test's own reads of its sizes (status()). */
async function workerSent(queue: string): Promise<Logged[]> {
  return (await logged(queue)).filter(({ args, sent }) => sent && !/^(llen|zcard|zrange|lrange)$/i.test(args[0]!));
}

/** The takes among `entries`: takeTasks calls (EVALSHA/EVAL with the ready list, then an active list) and BLMOVEs. */
function takes(entries: Logged[], queue: string): Logged[] {
  const q = keys().queue(queue);
  return entries.filter(
    ({ args, sent }) =>
      sent &&
      ((/^eval(sha)?$/i.test(args[0]!) && args[3] === q.ready && args[4]?.startsWith(q.active(''))) ||
        /^blmove$/i.test(args[0]!)),
  );
}

/** What the worker sent for `n` tasks of queue `q`: one round trip a task, and a handful besides. */
async function expectOneTripPerTask(q: string, n: number): Promise<void> {
  const sent = await workerSent(q);
  // The first take, and one more once the queue ran dry (then BLMOVE waits): not one a task.
  expect(takes(sent, q).filter((e) => !/^blmove$/i.test(e.args[0]!)).length).toBeLessThanOrEqual(2);
  // One settling a task, and a handful besides (the first heartbeat and promote, the doorbell's subscription, two
  // takes, a waiting BLMOVE): the old path sent two a task.
  expect(sent.length).toBeGreaterThanOrEqual(n);
  expect(sent.length).toBeLessThanOrEqual(n + ROUND_TRIPS_BESIDES);
}

describe('a busy worker', () => {
  it('takes the next task in the acknowledgement that frees its slot: one round trip a task, in order', async () => {
    const q = uniqueName('busy');
    const n = 50;
    for (let i = 0; i < n; i++) await queues().enqueue({ queue: q, name: 'task', args: i });
    await resetLog();
    const order: unknown[] = [];
    startWorker([{ queue: q, name: 'task', run: (args) => Promise.resolve(void order.push(args)) }]);
    const drained = async () => order.length === n && (await queues().status({ queue: q })).running === 0;
    expect(await eventually(drained)).toBe(true);
    expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    await expectOneTripPerTask(q, n);
  });

  it('at concurrency 4, each slot takes its next task as its task is acknowledged or filed as failed', async () => {
    const q = uniqueName('busy4');
    const n = 60;
    for (let i = 0; i < n; i++) await queues().enqueue({ queue: q, name: 'task', args: i, maxAttempts: 1 });
    await resetLog();
    const ran: number[] = [];
    startWorker(
      [
        {
          queue: q,
          name: 'task',
          run: (args) => {
            ran.push(args as number);
            return (args as number) % 3 === 0 ? Promise.reject(new Error('every third fails')) : Promise.resolve();
          },
        },
      ],
      { concurrency: 4 },
    );
    expect(
      await eventually(async () => {
        const status = await queues().status({ queue: q });
        return status.failed === n / 3 && status.running === 0 && status.ready === 0;
      }),
    ).toBe(true);
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    await expectOneTripPerTask(q, n);
  });

  it("a stopping worker's acknowledgement takes nothing: the next task stays ready, its place kept", async () => {
    const q = uniqueName('stopping');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: unknown[] = [];
    const worker = startWorker([
      {
        queue: q,
        name: 'task',
        run: async (args) => {
          ran.push(args);
          if (args === 'first') await gate;
        },
      },
    ]);
    for (const args of ['first', 'second', 'third']) await queues().enqueue({ queue: q, name: 'task', args });
    expect(await eventually(() => Promise.resolve(ran.length === 1))).toBe(true);
    await resetLog();
    const stopped = worker.stop(10_000);
    release();
    await stopped;
    expect(ran).toEqual(['first']);
    const ready = await s.redis.lrange(keys().queue(q).ready, 0, -1);
    expect(ready.map((raw) => JSON.parse(raw) as { args: string; attempts: number })).toMatchObject([
      { args: 'second', attempts: 0 },
      { args: 'third', attempts: 0 },
    ]);
    // Nothing moved out of the ready list once the stop was asked: not by the acknowledgement, not by any take.
    const moves = (await logged(q)).filter(
      (e) => /^(b?lmove)$/i.test(e.args[0]!) && e.args[1] === keys().queue(q).ready,
    );
    expect(moves).toEqual([]);
    expect((await queues().status({ queue: q })).running).toBe(0);
  });

  it('a task taken by the acknowledgement of a worker that then dies goes back to the queue, an attempt counted', async () => {
    const q = uniqueName('ghost');
    for (const args of ['a', 'b', 'c']) await queues().enqueue({ queue: q, name: 'task', args });
    const [a] = await queues().takeReady({ queue: q, workerId: 'ghost', max: 1 });
    expect(a?.args).toBe('a');
    await queues().heartbeat({ queue: q, workerId: 'ghost', timeoutMs: 500 });
    const settled = await queues().ack({ queue: q, workerId: 'ghost', task: a!, take: 1 });
    expect(settled.done).toBe(true);
    expect(settled.taken.map((t) => t.args)).toEqual(['b']);
    // The ghost dies holding b; a live worker's heartbeat finds it quiet and returns b (c may run first).
    expect((await queues().status({ queue: q })).running).toBe(1);
    const runs: [unknown, number][] = [];
    startWorker(
      [{ queue: q, name: 'task', run: (args, ctx) => Promise.resolve(void runs.push([args, ctx.attempt])) }],
      {
        heartbeatMs: 100,
        timeoutMs: 500,
      },
    );
    expect(await eventually(() => Promise.resolve(runs.length === 2), 10_000)).toBe(true);
    expect(new Map(runs)).toEqual(
      new Map([
        ['b', 2],
        ['c', 1],
      ]),
    );
    expect(await s.redis.zscore(keys().queue(q).workers, 'ghost')).toBeNull();
  });
});
