/**
 * Start time and memory of the gateway (`npm run bench:start`): `npm start` as it is now (the compiled JavaScript of
 * `npm run build` on the Node of the project's `node` dependency) beside how it ran before (the TypeScript sources
 * under tsx on the machine's own Node, BENCH_BEFORE_NODE, default the first `node` on PATH outside node_modules).
 * Each round starts one of each in turn (alternating which goes first) on a private Redis, with the worker on as
 * `npm start` runs it: the time until it logs that it listens and until /readyz answers 200, its resident memory
 * then, and after BENCH_REQUESTS queries.
 * Every answer is checked; a failed one is counted and printed, and stops the aim from counting as met.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ROOT,
  graphql,
  median,
  positiveInt,
  progress,
  start,
  startRedis,
  stop,
  type Child,
} from './support/processes.js';

const ROUNDS = positiveInt('BENCH_ROUNDS', 5);
const REQUESTS = positiveInt('BENCH_REQUESTS', 2000);
const IN_FLIGHT = 10;
/** The compiled gateway on Node 24 should start no slower than the sources under tsx (ratio of medians). */
const AIM = 1;

interface Variant {
  label: string;
  command: string;
  args: string[];
}

interface Sample {
  listeningMs: number;
  readyMs: number;
  rssReadyMb: number;
  rssAfterMb: number;
}

function nodeBefore(): string {
  if (process.env.BENCH_BEFORE_NODE) return process.env.BENCH_BEFORE_NODE;
  const found = execFileSync('bash', ['-c', 'which -a node'], { encoding: 'utf8' })
    .split('\n')
    .find((p) => p && !p.includes('node_modules'));
  if (!found) throw new Error('no node on PATH outside node_modules: set BENCH_BEFORE_NODE');
  return found;
}

function version(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1]) / 1024;
}

/** Starts the variant, waits for it to listen and be ready, loads it, and stops it; one sample. */
async function once(v: Variant, redisUrl: string, tag: string, failures: string[]): Promise<Sample> {
  const started = performance.now();
  const child: Child = start(`${v.label} ${tag}`, v.command, v.args, {
    REDIS_URL: redisUrl,
    KEY_PREFIX: `bench-start-${tag}:`,
    PORT: '0',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '0',
    SIGNUPS_PER_MINUTE: '0',
    SIGNIN_FAILURES_PER_MINUTE: '0',
  });
  let out = '';
  child.proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  let url = '';
  let listeningMs = 0;
  while (!url) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited:\n${child.output()}`);
    const m = /"url":"(http:[^"]+)"[^\n]*"msg":"gateway listening"/.exec(out);
    if (m) {
      url = m[1]!;
      listeningMs = performance.now() - started;
    } else await new Promise((r) => setTimeout(r, 5));
    if (performance.now() - started > 30_000) throw new Error(`${child.name} did not listen within 30 s`);
  }
  const readyz = url.replace('/graphql', '/readyz');
  for (;;) {
    const status = await fetch(readyz)
      .then((r) => r.status)
      .catch(() => 0);
    if (status === 200) break;
    if (performance.now() - started > 30_000) throw new Error(`${child.name} was not ready within 30 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const readyMs = performance.now() - started;
  const pid = child.proc.pid!;
  const rssReadyMb = rssMb(pid);
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < REQUESTS; i = next++) {
        try {
          const { data } = await graphql(url, '{ maintenance me { username } }');
          if (data.maintenance !== false || data.me !== null) failures.push(`${v.label}: ${JSON.stringify(data)}`);
        } catch (err) {
          failures.push(`${v.label}: ${String(err)}`);
        }
      }
    }),
  );
  const rssAfterMb = rssMb(pid);
  await stop(child);
  if (child.proc.exitCode !== 0) failures.push(`${v.label}: exited with ${child.proc.exitCode} on SIGTERM`);
  return { listeningMs, readyMs, rssReadyMb, rssAfterMb };
}

async function main(): Promise<number> {
  if (!existsSync(path.join(ROOT, 'dist', 'server.js'))) throw new Error('dist/server.js is missing: npm run build');
  const before = nodeBefore();
  const variants: Variant[] = [
    {
      label: `sources under tsx, Node ${version(before)}`,
      command: before,
      args: ['--import', 'tsx', 'src/server.ts'],
    },
    { label: `dist/server.js, Node ${process.versions.node}`, command: process.execPath, args: ['dist/server.js'] },
  ];
  const redis = await startRedis();
  const samples = variants.map(() => [] as Sample[]);
  const failures: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternating which starts first: AB, BA, AB...
    const order = round % 2 ? [0, 1] : [1, 0];
    for (const i of order) {
      const v = variants[i]!;
      samples[i]!.push(await once(v, redis.url, `${round}-${i}`, failures));
      progress(`round ${round}/${ROUNDS}: ${v.label} ready in ${samples[i]!.at(-1)!.readyMs.toFixed(0)} ms`);
    }
  }
  await stop(redis.child);

  console.log(
    `\nGateway start (npm start), worker on, rate limits off, on a private redis-server; medians of ${ROUNDS} rounds; ` +
      `${REQUESTS} queries at ${IN_FLIGHT} in flight after ready\n`,
  );
  console.log('| how it runs | listening (ms) | /readyz 200 (ms) | RSS at ready (MB) | RSS after queries (MB) |');
  console.log('|---|---|---|---|---|');
  const medians = samples.map((s) => ({
    listening: median(s.map((x) => x.listeningMs)),
    ready: median(s.map((x) => x.readyMs)),
    rssReady: median(s.map((x) => x.rssReadyMb)),
    rssAfter: median(s.map((x) => x.rssAfterMb)),
  }));
  variants.forEach((v, i) => {
    const m = medians[i]!;
    console.log(
      `| ${v.label} | ${m.listening.toFixed(0)} | ${m.ready.toFixed(0)} | ${m.rssReady.toFixed(0)} | ${m.rssAfter.toFixed(0)} |`,
    );
  });
  const [old, now] = medians as [(typeof medians)[0], (typeof medians)[0]];
  const ratio = now.ready / old.ready;
  console.log(
    `\nready: compiled / sources = ${ratio.toFixed(2)} (aim ≤ ${AIM}); RSS at ready: ${(now.rssReady / old.rssReady).toFixed(2)}, after queries: ${(now.rssAfter / old.rssAfter).toFixed(2)}`,
  );
  console.log(`failed answers: ${failures.length}${failures.length ? `\n  ${failures.slice(0, 5).join('\n  ')}` : ''}`);
  const met = failures.length === 0 && ratio <= AIM;
  console.log(`aim ${met ? 'met' : 'NOT met'}`);
  return met ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
