/**
 * The naive-polling baseline of bench/subscriptions.ts (a child process): the book's fetch_pending_messages for every
 * subscriber on a timer. Input and output: docs/benchmarks.md.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

interface Subscriber {
  key: string;
  after: number;
}

const file = process.env.NAIVE_SUBSCRIBERS_FILE;
if (!file) throw new Error('NAIVE_SUBSCRIBERS_FILE is required');
const subscribers = JSON.parse(readFileSync(file, 'utf8')) as Subscriber[];
const intervalMs = Number(process.env.NAIVE_INTERVAL_MS ?? 100);
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { connectionName: 'naive-poller' });

let ticks = 0;
let commands = 0;
let stopped = false;

async function tick(): Promise<void> {
  const pipeline = redis.pipeline();
  for (const s of subscribers) pipeline.zrangebyscore(s.key, `(${s.after}`, '+inf');
  const results = (await pipeline.exec()) ?? [];
  results.forEach(([err, rows], i) => {
    if (err) throw err;
    const messages = rows as string[];
    const last = messages.at(-1);
    if (last !== undefined) subscribers[i]!.after = (JSON.parse(last) as { id: number }).id;
  });
  ticks++;
  commands += subscribers.length;
}

async function loop(): Promise<void> {
  while (!stopped) {
    const started = performance.now();
    await tick();
    const wait = intervalMs - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

const report = setInterval(() => process.stdout.write(`${JSON.stringify({ ticks, commands })}\n`), 1000);

const shutdown = () => {
  stopped = true;
  clearInterval(report);
  redis.disconnect();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

loop().catch((err: unknown) => {
  process.stderr.write(`naive poller: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
