/**
 * Redis CPU per call of the lock release scripts beside redis-semaphore's (issue 27): a private redis-server, and
 * per script BENCH_CALLS (30,000) pipelined pairs of a SET of a holder's value and the release, over BENCH_ROUNDS
 * (6) rounds in turn; INFO commandstats `usec_per_call` of EVALSHA after CONFIG RESETSTAT, medians per script and
 * the ratio to redis-semaphore's release measured in the same rounds. Every release's answer is checked (a wrong one
 * is counted and fails the run).
 *
 *   npx tsx bench/lock-release-scripts.ts
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { defineScripts, script } from '../src/redis/scripts.js';
import { median, positiveInt, progress, runBench, startRedis } from './support/processes.js';

const CALLS = positiveInt('BENCH_CALLS', 30_000);
const ROUNDS = positiveInt('BENCH_ROUNDS', 6);
const BATCH = 100;

/** redis-semaphore 5's Mutex release (lib/mutex/release.js, delIfEqualLua), the baseline. */
const REDIS_SEMAPHORE_RELEASE = `
  local key = KEYS[1]
  local identifier = ARGV[1]

  if redis.call('get', key) == identifier then
    return redis.call('del', key)
  end

  return 0
`;

const KEY = 'bench:rlock:{release-probe}';

interface Variant {
  label: string;
  /** The holder's value SET before each release, and the release's arguments for it. */
  value: (token: string) => string;
  queue: (pipeline: ReturnType<Redis['pipeline']>, token: string) => void;
  /** The answer a release must give. */
  answer: number;
}

async function main(): Promise<number> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  defineScripts(redis);
  const semSha = (await redis.script('LOAD', REDIS_SEMAPHORE_RELEASE)) as string;
  const releaseLock = script<number>('releaseLock');
  const releaseReentrant = script<number>('releaseReentrant');
  const reentrant = (token: string) => `owner-1 ${token} 1 0`;
  const variants: Variant[] = [
    {
      label: "redis-semaphore's release (baseline)",
      value: (token) => token,
      queue: (p, token) => void p.evalsha(semSha, 1, KEY, token),
      answer: 1,
    },
    {
      label: 'releaseLock, plain lock',
      value: (token) => token,
      queue: (p, token) => releaseLock.queue(p, [KEY], [token]),
      answer: 1,
    },
    {
      label: 'releaseLock, reentrant value at depth 1',
      value: reentrant,
      queue: (p, token) => releaseLock.queue(p, [KEY], [reentrant(token)]),
      answer: 1,
    },
    {
      label: 'releaseReentrant at depth 1',
      value: reentrant,
      queue: (p, token) => releaseReentrant.queue(p, [KEY], [token]),
      answer: 0,
    },
  ];
  // Each script loaded (the first EVALSHA of a defined command may be an EVAL) before anything is counted.
  for (const v of variants) {
    const p = redis.pipeline();
    const token = randomUUID();
    p.set(KEY, v.value(token));
    v.queue(p, token);
    await p.exec();
  }
  const usec = new Map<string, number[]>();
  let wrong = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const v of round % 2 ? variants : [...variants].reverse()) {
      await redis.config('RESETSTAT');
      for (let done = 0; done < CALLS; done += BATCH) {
        const p = redis.pipeline();
        for (let i = 0; i < BATCH; i++) {
          const token = randomUUID();
          p.set(KEY, v.value(token), 'PX', 60_000);
          v.queue(p, token);
        }
        const replies = (await p.exec()) ?? [];
        for (let i = 1; i < replies.length; i += 2) if (replies[i]![1] !== v.answer) wrong++;
      }
      const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
      if (!stats || Number(stats[1]) !== CALLS)
        throw new Error(`${v.label}: EVALSHA calls ${stats?.[1]}, not ${CALLS}`);
      const perCall = Number(stats[2]) / CALLS;
      usec.set(v.label, [...(usec.get(v.label) ?? []), perCall]);
      progress(`round ${round}/${ROUNDS}: ${v.label}: ${perCall.toFixed(2)} µs per call`);
    }
  }
  redis.disconnect();
  const base = median(usec.get(variants[0]!.label)!);
  console.log(`Redis CPU µs per EVALSHA, ${CALLS} calls a round, ${ROUNDS} rounds, medians (range):`);
  for (const v of variants) {
    const xs = usec.get(v.label)!;
    const ratio = (median(xs) / base).toFixed(2);
    console.log(
      `  ${v.label.padEnd(42)} ${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}), ${ratio} of the baseline`,
    );
  }
  console.log(`wrong answers: ${wrong}`);
  return wrong === 0 ? 0 : 1;
}

await runBench(main);
