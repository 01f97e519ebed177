/**
 * Locks and task queues beside redis-semaphore and BullMQ, read-write locks beside our plain lock and reentrant locks
 * beside both, in one run on one Redis, and RedLock beside the redlock package on five more
 * (`npm run bench:coordination`). How it measures: docs/benchmarks.md.
 */
import { Queue, Worker as BullWorker, type ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Mutex } from 'redis-semaphore';
import Redlock from 'redlock';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { closeRedisClient, createRedisClient } from '../src/redis/clients.js';
import { DRIFT_FACTOR, RETRY_DELAY_MS, RETRY_JITTER_MS } from '../src/services/coordination/redlock.js';
import { isLease } from '../src/services/coordination/reentrant.js';
import { createServices } from '../src/services/index.js';
import { Worker } from '../src/worker/worker.js';
import { HOST, cpuSeconds, median, pin, positiveInt, progress, runBench, startRedis } from './support/processes.js';

const SECONDS = positiveInt('BENCH_SECONDS', 3);
/** Rounds of every case; even, so that each side goes first in as many rounds as the other. */
const ROUNDS = positiveInt('BENCH_ROUNDS', 4);
/**
 * Rounds of the lock pairs (tables locks and reentrant), at least 12: their two sides differ by a few µs in a pair
 * of about 35, less than the machine moves one round's rate, so they take more rounds than the queues.
 */
const LOCK_ROUNDS = Math.max(ROUNDS, 12);
const PAIR_TABLES: readonly string[] = ['locks', 'reentrant'];
/**
 * BENCH_PIN=1: this process (both libraries' clients) runs on CPU 0 only and the redis-server on CPU 1 only
 * (taskset), so neither moves between the cores nor takes the other's in the middle of a round.
 */
const PIN = process.env.BENCH_PIN === '1';
const TASKS = positiveInt('BENCH_TASKS', 10_000);
const LOCK_CLIENTS = 50;
/** Read-write lock rows: one pair in this many writes, the others read; each holder works this long (ms). */
const RW_WRITE_EVERY = 10;
const RW_HOLD_MS = 1;
const IN_FLIGHT = 50;
const LEASE_MS = 10_000;
const WAIT_MS = 10_000;
/** The longest a processing measurement may take before the tasks count as lost. */
const DRAIN_TIMEOUT_MS = Math.max(60_000, TASKS * 10);

/** How much one measurement does: lock loops run `seconds`, queue measurements handle `tasks`. */
interface Size {
  seconds: number;
  tasks: number;
}
/** Per second, and per operation (lock pair or task). */
interface Sample {
  rate: number;
  commands: number;
  cpuUs: number;
  /** CPU µs of this process (the client side, both libraries run here) per operation. */
  clientUs: number;
  /** Locks: the pairs of the least served client over the mean per client (1: even; near 0: it starved). */
  fairness?: number;
}
type Side = (tag: string, size: Size) => Promise<Sample>;
/** The tables the cases go to, in the order they print. */
const TABLES = ['locks', 'rwlocks', 'reentrant', 'enqueue', 'processing', 'redlock'] as const;
type Table = (typeof TABLES)[number];
/** The tables measured: BENCH_SECTIONS, comma-separated (`enqueue,processing`: the queue rows only); all by default. */
const SECTIONS = new Set((process.env.BENCH_SECTIONS || TABLES.join(',')).split(',').map((x) => x.trim()));
for (const section of SECTIONS)
  if (!(TABLES as readonly string[]).includes(section))
    throw new Error(`BENCH_SECTIONS: no table "${section}" (tables: ${TABLES.join(', ')})`);
interface Case {
  table: Table;
  name: string;
  baseline: string;
  ours: Side;
  base: Side;
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** A redis-server a measurement reads: a connection for INFO, and its process (for its CPU time). */
interface Measured {
  admin: Redis;
  pid: number;
}
/** The Redis of the locks and queues. */
let measured: Measured[];

/** Commands processed and CPU used so far by `servers` together, and this process's CPU. */
async function snapshot(servers: Measured[]): Promise<{ commands: number; cpu: number; client: number }> {
  let commands = 0;
  let cpu = 0;
  for (const { admin, pid } of servers) {
    const m = /total_commands_processed:(\d+)/.exec(await admin.info('stats'));
    if (!m) throw new Error('INFO stats has no total_commands_processed');
    commands += Number(m[1]);
    cpu += cpuSeconds(pid);
  }
  const { user, system } = process.cpuUsage();
  return { commands, cpu, client: user + system };
}

/** Starts the clock; the function it returns stops it and turns `ops` into a Sample (figures summed over `servers`). */
async function begin(servers = measured): Promise<(ops: number) => Promise<Sample>> {
  const before = await snapshot(servers);
  const t0 = performance.now();
  return async (ops) => {
    const seconds = (performance.now() - t0) / 1000;
    const after = await snapshot(servers);
    if (ops === 0) throw new Error('no operation completed');
    // Less one per server: the INFO of `before` counts in `after`.
    return {
      rate: ops / seconds,
      commands: (after.commands - before.commands - servers.length) / ops,
      cpuUs: ((after.cpu - before.cpu) * 1e6) / ops,
      clientUs: (after.client - before.client) / ops,
    };
  };
}

/** Runs fn(0..n-1) with at most `inFlight` calls pending at once. */
async function pool(n: number, inFlight: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(n, inFlight) }, lane));
}

/** `clients` loops each repeating `pair` until `seconds` are up; acquire+release pairs per second. */
async function lockLoops(
  clients: number,
  seconds: number,
  pair: () => Promise<void>,
  servers = measured,
): Promise<Sample> {
  const end = await begin(servers);
  const deadline = performance.now() + seconds * 1000;
  const pairs = Array.from({ length: clients }, () => 0);
  const loop = async (_: unknown, i: number) => {
    while (performance.now() < deadline) {
      await pair();
      pairs[i]!++;
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  const ops = pairs.reduce((a, b) => a + b, 0);
  return { ...(await end(ops)), fairness: (Math.min(...pairs) * clients) / ops };
}

/** Counts handler runs; `done` resolves at `n`, and rejects when they take longer than DRAIN_TIMEOUT_MS. */
function countdown(n: number, what: string) {
  let count = 0;
  let resolve: () => void = () => undefined;
  const reached = new Promise<void>((r) => (resolve = r));
  return {
    hit: (): Promise<void> => {
      if (++count === n) resolve();
      return Promise.resolve();
    },
    count: () => count,
    async done(): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: only ${count} of ${n} tasks ran within ${DRAIN_TIMEOUT_MS} ms`)),
          DRAIN_TIMEOUT_MS,
        );
      });
      await Promise.race([reached, timeout]).finally(() => clearTimeout(timer));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reentrant locks: acquire/release pairs of one loop (the uncontended path a holder takes), at depth 1 and nested at
// depth 2. Redisson, the seed's reentrant lock, is Java: the baselines are redis-semaphore's Mutex (the Node lock the
// plain lock is held to), which re-enters only by refreshing a lock taken with the same identifier
// (`acquiredExternally`) and keeps no depth, so its nested pair is acquire, re-acquire, one release; and our plain
// lock, which cannot re-enter at all. Every pair checks its answers: the depth each step reports, the same lease
// inside, a release that found its lease. Neither side draws a fencing token (ours draws one only when asked,
// `fence(lease)`, as the plain lock). Ours counts a re-entry in the process that holds the lock without a round trip
// (docs/coordination.md), so its nested pair is two round trips against redis-semaphore's three.

function reentrantCases(services: ReturnType<typeof createServices>, semClient: Redis): Case[] {
  const locks = services.reentrantLocks;
  const nested = (depth: 1 | 2): Side => {
    const owner = `bench-${depth}`;
    return (tag, { seconds }) =>
      lockLoops(1, seconds, async () => {
        const outer = await locks.acquire({ name: tag, owner, leaseMs: LEASE_MS, waitMs: WAIT_MS });
        if (!isLease(outer) || outer.depth !== 1)
          throw new Error(`ours: ${tag} at depth 1 got ${JSON.stringify(outer)}`);
        if (depth === 2) {
          const inner = await locks.acquire({ name: tag, owner, leaseMs: LEASE_MS });
          if (!isLease(inner) || inner.depth !== 2 || inner.token !== outer.token)
            throw new Error(`ours: ${tag} re-entered got ${JSON.stringify(inner)}`);
          if ((await locks.release(inner)) !== 1) throw new Error(`ours: ${tag}'s inner release did not leave depth 1`);
        }
        if ((await locks.release(outer)) !== 0) throw new Error(`ours: ${tag}'s last release did not free it`);
      });
  };
  const mutex = (depth: 1 | 2): Side => {
    return (tag, { seconds }) =>
      lockLoops(1, seconds, async () => {
        const options = { lockTimeout: LEASE_MS, acquireTimeout: WAIT_MS, refreshInterval: 0 };
        const outer = new Mutex(semClient, tag, options);
        await outer.acquire(); // throws when not acquired within acquireTimeout
        if (depth === 2) {
          const inner = new Mutex(semClient, tag, {
            ...options,
            identifier: outer.identifier,
            acquiredExternally: true,
          });
          await inner.acquire(); // a refresh: throws when the lock is not held with the identifier
        }
        await outer.release();
      });
  };
  const plain: Side = (tag, { seconds }) =>
    lockLoops(1, seconds, async () => {
      const lease = await services.locks.acquire({ name: tag, leaseMs: LEASE_MS, waitMs: WAIT_MS });
      if (!lease) throw new Error(`plain: lock ${tag} not acquired within ${WAIT_MS} ms`);
      if (!(await services.locks.release(lease))) throw new Error(`plain: releasing lock ${tag} found the lease gone`);
    });
  // One table, three baselines: each case names its own, and the table's column is "baseline".
  return [
    { table: 'reentrant', name: 'depth 1 vs redis-semaphore', baseline: 'baseline', ours: nested(1), base: mutex(1) },
    { table: 'reentrant', name: 'depth 1 vs our plain lock', baseline: 'baseline', ours: nested(1), base: plain },
    {
      table: 'reentrant',
      name: 'nested depth 2 vs redis-semaphore re-entered by identifier',
      baseline: 'baseline',
      ours: nested(2),
      base: mutex(2),
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const redisServer = await startRedis();
  if (PIN) {
    pin(process.pid, '0');
    pin(redisServer.child.proc.pid!, '1');
  }
  const admin = new Redis(redisServer.url);
  measured = [{ admin, pid: redisServer.child.proc.pid! }];
  const config = loadConfig({ REDIS_URL: redisServer.url, LOG_LEVEL: 'silent', KEY_PREFIX: 'bench:' });
  if (config.redis.kind !== 'url') throw new Error(`expected a Redis URL, got ${config.redis.kind}`);
  const log = createLogger('silent');
  const redis = createRedisClient(config.redis, log, 'bench');
  const services = createServices(redis, config, log);
  const semClient = new Redis(redisServer.url);
  const connection: ConnectionOptions = { host: HOST, port: redisServer.port };
  const defaultJobOptions = { removeOnComplete: true, removeOnFail: true };

  const ourLocks =
    (clients: number): Side =>
    (tag, { seconds }) =>
      lockLoops(clients, seconds, async () => {
        const lease = await services.locks.acquire({ name: tag, leaseMs: LEASE_MS, waitMs: WAIT_MS });
        if (!lease) throw new Error(`ours: lock ${tag} not acquired within ${WAIT_MS} ms`);
        if (!(await services.locks.release(lease))) throw new Error(`ours: releasing lock ${tag} found the lease gone`);
      });
  const theirLocks =
    (clients: number): Side =>
    (tag, { seconds }) =>
      lockLoops(clients, seconds, async () => {
        const mutex = new Mutex(semClient, tag, { lockTimeout: LEASE_MS, acquireTimeout: WAIT_MS, refreshInterval: 0 });
        await mutex.acquire(); // throws when not acquired within acquireTimeout
        await mutex.release();
      });

  // Read-write lock: LOCK_CLIENTS loops, 9 pairs in 10 reading, each holding the lock for RW_HOLD_MS; the baseline is
  // our plain lock doing the same work, every pair exclusive (no maintained Redis read-write lock on npm to compare).
  const held = () => new Promise((resolve) => setTimeout(resolve, RW_HOLD_MS));
  const ourRwLocks: Side = (tag, { seconds }) => {
    let pairs = 0;
    return lockLoops(LOCK_CLIENTS, seconds, async () => {
      const mode = pairs++ % RW_WRITE_EVERY === 0 ? 'write' : 'read';
      const lease = await services.rwlocks.acquire({ name: tag, mode, leaseMs: LEASE_MS, waitMs: WAIT_MS });
      if (!lease) throw new Error(`ours: ${mode} lock ${tag} not acquired within ${WAIT_MS} ms`);
      await held();
      if (!(await services.rwlocks.release(lease)))
        throw new Error(`ours: releasing ${mode} lock ${tag} found it gone`);
    });
  };
  const plainExclusive: Side = (tag, { seconds }) =>
    lockLoops(LOCK_CLIENTS, seconds, async () => {
      const lease = await services.locks.acquire({ name: tag, leaseMs: LEASE_MS, waitMs: WAIT_MS });
      if (!lease) throw new Error(`plain: lock ${tag} not acquired within ${WAIT_MS} ms`);
      await held();
      if (!(await services.locks.release(lease))) throw new Error(`plain: releasing lock ${tag} found the lease gone`);
    });

  const ourEnqueue = (queue: string, tasks: number) =>
    pool(tasks, IN_FLIGHT, () => services.queues.enqueue({ queue, name: 'noop', args: {} }));
  const theirEnqueue = (queue: Queue, tasks: number) => pool(tasks, IN_FLIGHT, () => queue.add('noop', {}));

  const ourProcessing =
    (concurrency: number): Side =>
    async (tag, { tasks }) => {
      await ourEnqueue(tag, tasks);
      const runs = countdown(tasks, `ours ${tag}`);
      const handler = { queue: tag, name: 'noop', run: runs.hit };
      const worker = new Worker({
        ...services,
        handlers: [handler],
        options: { concurrency, heartbeatMs: 1000, timeoutMs: 10_000, pollMs: 100 },
        log,
      });
      const end = await begin();
      worker.start();
      try {
        await runs.done();
      } finally {
        await worker.stop(1000);
      }
      const sample = await end(tasks);
      const left = await services.queues.status({ queue: tag });
      if (runs.count() !== tasks || left.ready + left.running + left.delayed + left.failed > 0) {
        throw new Error(`ours ${tag}: ${runs.count()} runs of ${tasks} tasks; left ${JSON.stringify(left)}`);
      }
      return sample;
    };
  const theirProcessing =
    (concurrency: number): Side =>
    async (tag, { tasks }) => {
      const queue = new Queue(tag, { connection, defaultJobOptions });
      await theirEnqueue(queue, tasks);
      const runs = countdown(tasks, `BullMQ ${tag}`);
      const worker = new BullWorker(tag, runs.hit, { connection, concurrency, autorun: false });
      const errors: string[] = [];
      worker.on('error', (err) => errors.push(String(err)));
      worker.on('failed', (job, err) => errors.push(`job ${job?.id}: ${String(err)}`));
      await worker.waitUntilReady();
      const end = await begin();
      const running = worker.run();
      try {
        await runs.done();
      } finally {
        await worker.close();
        await running;
      }
      const sample = await end(tasks);
      const left = await queue.getJobCounts('wait', 'active', 'delayed', 'failed', 'completed', 'prioritized');
      await queue.close();
      if (errors.length > 0 || runs.count() !== tasks || Object.values(left).some((n) => n > 0)) {
        throw new Error(
          `BullMQ ${tag}: ${runs.count()} runs of ${tasks} tasks; left ${JSON.stringify(left)}; errors ${errors.join('; ')}`,
        );
      }
      return sample;
    };

  const cases: Case[] = [
    ...reentrantCases(services, semClient),
    { table: 'locks', name: 'sequential', baseline: 'redis-semaphore', ours: ourLocks(1), base: theirLocks(1) },
    {
      table: 'locks',
      name: `${LOCK_CLIENTS} concurrent`,
      baseline: 'redis-semaphore',
      ours: ourLocks(LOCK_CLIENTS),
      base: theirLocks(LOCK_CLIENTS),
    },
    {
      table: 'rwlocks',
      name: `${LOCK_CLIENTS} concurrent, ${100 - 100 / RW_WRITE_EVERY} % readers, held ${RW_HOLD_MS} ms`,
      baseline: 'our plain lock',
      ours: ourRwLocks,
      base: plainExclusive,
    },
    {
      table: 'enqueue',
      name: `${IN_FLIGHT} in flight`,
      baseline: 'BullMQ',
      ours: async (tag, { tasks }) => {
        const end = await begin();
        await ourEnqueue(tag, tasks);
        return end(tasks);
      },
      base: async (tag, { tasks }) => {
        const queue = new Queue(tag, { connection, defaultJobOptions });
        await queue.waitUntilReady();
        const end = await begin();
        await theirEnqueue(queue, tasks);
        const sample = await end(tasks);
        await queue.close();
        return sample;
      },
    },
    {
      table: 'processing',
      name: 'concurrency 1',
      baseline: 'BullMQ',
      ours: ourProcessing(1),
      base: theirProcessing(1),
    },
    {
      table: 'processing',
      name: 'concurrency 16',
      baseline: 'BullMQ',
      ours: ourProcessing(16),
      base: theirProcessing(16),
    },
  ];
  const redlock = SECTIONS.has('redlock') ? await redlockCases(redis, log) : undefined;
  cases.push(...(redlock?.cases ?? []));
  const selected = cases.filter((c) => SECTIONS.has(c.table));

  let serial = 0;
  const run = async (c: Case, which: 'ours' | 'base', size: Size, label: string): Promise<Sample> => {
    const tag = `${c.table}-${which}-${++serial}`;
    const s = await c[which](tag, size);
    const who = which === 'ours' ? 'ours' : c.baseline;
    const fair = s.fairness === undefined ? '' : `, fairness ${s.fairness.toFixed(2)}`;
    progress(
      `${label}: ${c.table} ${c.name}, ${who}: ${s.rate.toFixed(0)}/s, ${s.commands.toFixed(2)} cmds/op, CPU µs/op redis ${s.cpuUs.toFixed(1)} client ${s.clientUs.toFixed(1)}${fair}`,
    );
    return s;
  };

  const warmup = { seconds: 0.5, tasks: Math.max(1, Math.floor(TASKS / 10)) };
  for (const c of selected)
    for (const which of ['ours', 'base'] as const) await run(c, which, warmup, 'warm-up (discarded)');
  const samples = selected.map(() => ({ ours: [] as Sample[], base: [] as Sample[] }));
  const size = { seconds: SECONDS, tasks: TASKS };
  const roundsRun = selected.some((c) => PAIR_TABLES.includes(c.table)) ? LOCK_ROUNDS : ROUNDS;
  for (let round = 1; round <= roundsRun; round++) {
    const order = round % 2 ? (['ours', 'base'] as const) : (['base', 'ours'] as const);
    for (const [i, c] of selected.entries()) {
      if (round > (PAIR_TABLES.includes(c.table) ? LOCK_ROUNDS : ROUNDS)) continue;
      for (const which of order) samples[i]![which].push(await run(c, which, size, `round ${round}/${roundsRun}`));
    }
  }

  await redlock?.close();
  await services.close();
  await closeRedisClient(redis);
  await Promise.all([semClient.quit(), admin.quit()]);

  // Report.
  const med = (ss: Sample[], k: keyof Sample) => median(ss.map((s) => s[k] ?? NaN));
  let missed = 0;
  const unit: Record<Table, string> = {
    locks: 'pairs/s',
    rwlocks: 'pairs/s',
    reentrant: 'pairs/s',
    enqueue: 'tasks/s',
    processing: 'tasks/s',
    redlock: 'pairs/s',
  };
  if (SECTIONS.size < TABLES.length) console.log(`\nBENCH_SECTIONS: only ${[...SECTIONS].join(', ')}`);
  console.log(
    `\n${ROUNDS} rounds (the lock pairs of tables ${PAIR_TABLES.join(' and ')}: ${LOCK_ROUNDS}), order alternating (ours first in odd rounds); ratio: of the medians, then the median of the per-round ratios (each round's two sides ran back to back) with their lowest and highest, and the aim met only when both are at least 1; ` +
      `${PIN ? 'this process (both sides) pinned to CPU 0, redis-server to CPU 1 (BENCH_PIN=1)' : 'not pinned'}; locks: ${SECONDS}s each, lease ${LEASE_MS} ms; queues: ${TASKS} tasks each, no-op handler; ` +
      `redlock: ${REDLOCK_SERVERS} servers (figures summed over them), retries every ${RETRY_DELAY_MS} ± ${RETRY_JITTER_MS} ms on both sides, drift factor ${DRIFT_FACTOR}`,
  );
  for (const table of TABLES) {
    const rows = selected.flatMap((c, i) => {
      if (c.table !== table) return [];
      const { ours, base } = samples[i]!;
      const ratio = med(ours, 'rate') / med(base, 'rate');
      // Ours over the baseline within each round (the two ran back to back): how far the machine moved the ratio.
      const rounds = ours.map((o, r) => o.rate / base[r]!.rate);
      const paired = median(rounds);
      const both = (k: keyof Sample, digits: number) =>
        `${med(ours, k).toFixed(digits)} | ${med(base, k).toFixed(digits)}`;
      const met = ratio >= 1 && paired >= 1;
      if (!met) missed++;
      return [
        {
          case: c.name,
          [`ours ${unit[table]}`]: Math.round(med(ours, 'rate')),
          [`${c.baseline} ${unit[table]}`]: Math.round(med(base, 'rate')),
          'ours/baseline': Number(ratio.toFixed(3)),
          'per round median (min-max)': `${paired.toFixed(3)} (${Math.min(...rounds).toFixed(2)}-${Math.max(...rounds).toFixed(2)})`,
          'aim >= 1': met ? 'met' : 'NOT met',
          'cmds/op ours|base': both('commands', 2),
          'redis µs/op ours|base': both('cpuUs', 0),
          'client µs/op ours|base': both('clientUs', 0),
          ...(table !== 'enqueue' && table !== 'processing' && { 'fairness ours|base': both('fairness', 2) }),
        },
      ];
    });
    if (rows.length === 0) continue;
    console.log(`\n${table} (medians)`);
    console.table(rows);
  }
  console.log(
    `aim (ours >= baseline): ${missed === 0 ? 'met in every case' : `NOT met in ${missed} of ${selected.length} cases`}`,
  );
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// RedLock beside the redlock package (4.x), on REDLOCK_SERVERS servers of their own

const REDLOCK_SERVERS = 5;

/**
 * Sequential and LOCK_CLIENTS-concurrent acquire/release pairs of the product's RedLock (REDLOCK_NODES) and of
 * redlock 4.x's, on the same servers, with the same lease, drift factor and retry pause (redlock's defaults, which the
 * product took); redlock retries as long as our `waitMs`. `redis` is the product's own Redis, which RedLock does not use.
 */
async function redlockCases(redis: ReturnType<typeof createRedisClient>, log: Logger) {
  const nodes = [];
  for (let i = 0; i < REDLOCK_SERVERS; i++) nodes.push(await startRedis());
  const servers = nodes.map(({ url, child }) => ({ admin: new Redis(url), pid: child.proc.pid! }));
  const urls = nodes.map(({ url }) => url);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    KEY_PREFIX: 'bench:',
    REDLOCK_NODES: urls.join(','),
    REDLOCK_MAX_LEASE_MS: String(LEASE_MS),
  });
  const services = createServices(redis, config, log);
  const ours = services.redlock!;
  // Fresh servers count once they have been up the longest lease (the delayed restart).
  progress(`waiting ${LEASE_MS} ms for the RedLock servers to count`);
  while (!ours.servers().every((s) => s.counts)) await new Promise((r) => setTimeout(r, 100));
  const clients = urls.map((url) => new Redis(url));
  const theirs = new Redlock(clients, {
    driftFactor: DRIFT_FACTOR,
    retryCount: Math.ceil(WAIT_MS / RETRY_DELAY_MS),
    retryDelay: RETRY_DELAY_MS,
    retryJitter: RETRY_JITTER_MS,
  });
  /** `n` loops of acquire/release pairs of the lock `tag`, figures read on the RedLock servers. */
  const pairs =
    (pair: (tag: string) => Promise<void>) =>
    (n: number): Side =>
    (tag, { seconds }) =>
      lockLoops(n, seconds, () => pair(tag), servers);
  const ourPairs = pairs(async (tag) => {
    const lease = await ours.acquire({ name: tag, leaseMs: LEASE_MS, waitMs: WAIT_MS });
    if (!lease) throw new Error(`ours: RedLock ${tag} not acquired within ${WAIT_MS} ms`);
    if (!(await ours.release(lease))) throw new Error(`ours: releasing RedLock ${tag} found no majority`);
  });
  const theirPairs = pairs(async (tag) => {
    const lock = await theirs.lock(tag, LEASE_MS); // rejects when not acquired within its retries
    await lock.unlock(); // rejects when a majority did not release it
  });
  const baseline = 'redlock 4.2';
  return {
    cases: [
      { table: 'redlock', name: 'sequential', baseline, ours: ourPairs(1), base: theirPairs(1) },
      {
        table: 'redlock',
        name: `${LOCK_CLIENTS} concurrent`,
        baseline,
        ours: ourPairs(LOCK_CLIENTS),
        base: theirPairs(LOCK_CLIENTS),
      },
    ] satisfies Case[],
    async close() {
      await services.close();
      await Promise.all([...clients, ...servers.map((s) => s.admin)].map((c) => c.quit()));
    },
  };
}

await runBench(main);
