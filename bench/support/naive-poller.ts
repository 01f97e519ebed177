/**
 * Naive-polling baseline for bench/subscriptions.ts (run as a child process): the book's fetch_pending_messages
 * done for every subscriber on a timer. For each subscriber it reads its mailbox every NAIVE_INTERVAL_MS
 * (default 100): one ZRANGEBYSCORE on its chat's messages key after its read position, and moves its position
 * past what it got. All subscribers' reads of one tick go out as one pipeline (the cheapest a naive client can
 * be); a tick that takes longer than the interval is followed by the next at once.
 *
 * Input: REDIS_URL, and NAIVE_SUBSCRIBERS_FILE, a JSON array of { key, after } (the chat's messages key and
 * the subscriber's read position). Every 1 s it prints a JSON line on stdout: { ticks, commands } so far.
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
