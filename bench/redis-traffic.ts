/**
 * What counting every Redis command costs (src/redis/clients.ts: each client's sendCommand wrapped with an
 * increment). One client from createRedisClient against one private redis-server, timed with the count (as made) and
 * without it (the wrapper removed from that same client: ioredis's own sendCommand), in alternating rounds of the same
 * run: N GETs one after another (each waits for its answer), and N GETs at once (CPU-bound: where an extra call per
 * command shows most). Every answer is checked; a wrong or failed one is counted and printed. Medians of the rounds,
 * and their ratio.
 *
 *   npm run bench:redis-traffic     (REDIS_TRAFFIC_GETS, default 20000; REDIS_TRAFFIC_ROUNDS, default 7)
 */
import { createLogger } from '../src/logger.js';
import { closeRedisClient, createRedisClient, redisTraffic, waitUntilReady } from '../src/redis/clients.js';
import { median, positiveInt, progress, startRedis, stopAll } from './support/processes.js';

const GETS = positiveInt('REDIS_TRAFFIC_GETS', 20_000);
const ROUNDS = positiveInt('REDIS_TRAFFIC_ROUNDS', 7);
const KEY = 'bench:traffic';
const VALUE = 'v';

async function main(): Promise<void> {
  const { url } = await startRedis();
  const client = createRedisClient({ kind: 'url', url }, createLogger('silent'), 'bench-traffic');
  await waitUntilReady(client, 10_000);
  await client.set(KEY, VALUE);
  const counted = Object.getOwnPropertyDescriptor(client, 'sendCommand')!; // the wrapper clients.ts put on this client
  const use = (count: boolean) => {
    if (count) Object.defineProperty(client, 'sendCommand', counted);
    else delete (client as Partial<typeof client>).sendCommand; // back to ioredis's own (the prototype's)
  };
  let wrong = 0;
  const check = (value: unknown) => {
    if (value !== VALUE && wrong++ < 3) progress(`wrong answer: ${String(value)}`);
  };
  const timed = async (run: () => Promise<void>) => {
    const t0 = process.hrtime.bigint();
    await run();
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const cases = {
    'one after another': async () => {
      for (let i = 0; i < GETS; i++) check(await client.get(KEY).catch((err: Error) => err.message));
    },
    'all at once': async () => {
      const answers = await Promise.all(
        Array.from({ length: GETS }, () => client.get(KEY).catch((err: Error) => err.message)),
      );
      answers.forEach(check);
    },
  };
  const ms: Record<string, { with: number[]; without: number[] }> = {};
  for (const name of Object.keys(cases)) ms[name] = { with: [], without: [] };
  const before = redisTraffic().get('bench-traffic')!.commands;
  let countedGets = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, run] of Object.entries(cases)) {
      // Alternating which goes first; round 0 warms up and is not kept.
      for (const count of round % 2 ? [true, false] : [false, true]) {
        use(count);
        const took = await timed(run);
        if (count) countedGets += GETS;
        if (round > 0) ms[name]![count ? 'with' : 'without'].push(took);
      }
    }
    progress(`round ${round} of ${ROUNDS}`);
  }
  use(true);
  const moved = redisTraffic().get('bench-traffic')!.commands - before;
  console.log(
    `\nbench:redis-traffic — ${GETS} GETs per round, ${ROUNDS} rounds, one ioredis client, local redis-server`,
  );
  console.log('case               | without the count (ms) | with the count (ms) | ratio with/without (medians)');
  for (const [name, { with: w, without: wo }] of Object.entries(ms)) {
    const [a, b] = [median(wo), median(w)];
    console.log(
      `${name.padEnd(18)} | ${a.toFixed(1).padStart(22)} | ${b.toFixed(1).padStart(19)} | ${(b / a).toFixed(3)}`,
    );
  }
  console.log(`answers wrong or failed: ${wrong}`);
  console.log(
    `counted commands: ${moved} for ${countedGets} GETs sent with the count (${moved === countedGets ? 'equal' : 'NOT equal'})`,
  );
  if (wrong > 0 || moved !== countedGets) process.exitCode = 1;
  await closeRedisClient(client);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
