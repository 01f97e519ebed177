/**
 * What the benchmarks share: env parsing, progress lines, child processes (stopped in reverse order, killed if
 * the bench exits without stopping them), a private redis-server, readiness probes, HTTP load runs (autocannon)
 * and the CPU time of a process. Ports, Redis, clients and the product's entries come from test/support.
 *
 * Importing this module installs the exit and signal handlers that stop the children.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { eventually, postGraphQL, signUp } from '../../test/support/clients.js';
import { ROOT, spawnEntry } from '../../test/support/entries.js';
import { LIMITS_OFF } from '../../test/support/limits.js';
import { freePort, startRedisProcess } from '../../test/support/redis-servers.js';

export { ROOT, freePort };
export { rawPoster } from './poster.js';
export const HOST = '127.0.0.1';

export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

export const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

// ---------------------------------------------------------------------------------------------------------------
// Child processes

export interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<void>;
  /** The last few KB of its stdout+stderr, for error messages. */
  output(): string;
}

const children: Child[] = [];

export function start(name: string, command: string, args: string[], env: Record<string, string> = {}): Child {
  return adopt(
    name,
    spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
}

/** Tracks a child started elsewhere (test/support) like one started here. */
function adopt(name: string, proc: ChildProcess): Child {
  let tail = '';
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    proc.once('exit', () => resolve());
    proc.once('error', (err) => {
      keep(Buffer.from(String(err)));
      resolve();
    });
  });
  const child = { name, proc, exited, output: () => tail };
  children.push(child);
  return child;
}

/**
 * The gateway as a child process with the rest of this process's environment but its rate limits off (LIMITS_OFF,
 * whatever this shell exports) unless `env` sets them: its sources under tsx (`npm run dev`), or with `entry`
 * 'dist/server.js' the build `npm start` runs. Each one's limits are printed at the end of the run (runBench).
 */
export function spawnGateway(name: string, env: Record<string, string>, entry = 'src/server.ts'): Child {
  const merged: Record<string, string> = { ...(process.env as Record<string, string>), ...LIMITS_OFF, ...env };
  const on = Object.keys(LIMITS_OFF).filter((k) => merged[k] !== '0');
  gatewayLimits.push(
    `${name}: ${on.length ? `limits ON (${on.map((k) => `${k}=${merged[k]}`).join(', ')})` : 'limits off'}`,
  );
  if (CPU_PROF) {
    // One directory per gateway; Node writes the profile when the gateway exits (stop()'s SIGTERM, not a SIGKILL).
    const dir = path.resolve(CPU_PROF, name.replace(/[^A-Za-z0-9._-]+/g, '-'));
    merged.NODE_OPTIONS = `${merged.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${dir}`.trim();
    progress(`${name}: CPU profile into ${dir}`);
  }
  const child = adopt(name, spawnEntry(entry, merged));
  if (GATEWAY_CPUS && child.proc.pid !== undefined) pin(child.proc.pid, GATEWAY_CPUS);
  return child;
}

/** The rate limits of every gateway started, for the run's last lines. */
const gatewayLimits: string[] = [];

/**
 * The sources of `commit` in a directory of their own, on this tree's node_modules: its src/server.ts, to measure
 * that commit as it was beside this tree (BENCH_BEFORE). Removed when the bench exits.
 */
export function checkoutCommit(commit: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-before-'));
  const archive = execFileSync('git', ['archive', commit, 'src', 'package.json', 'tsconfig.json'], {
    cwd: ROOT,
    maxBuffer: 1 << 30,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'src', 'server.ts');
}

/**
 * BENCH_GATEWAY_CPUS (a taskset list, e.g. "1"): every gateway a bench starts runs on these CPUs only, the load
 * generator and Redis wherever the kernel puts them. On a shared 2-core machine this keeps the gateways being
 * compared on the same core, so that one is not slowed for a stretch by what shares its core while another is not.
 */
const GATEWAY_CPUS = process.env.BENCH_GATEWAY_CPUS;

/**
 * BENCH_CPU_PROF (a directory): every gateway a bench starts runs with `node --cpu-prof`, its profile written into
 * <dir>/<the gateway's name> as it stops (open it in Chrome's DevTools, or summarize it with bench/support/profile.ts).
 */
const CPU_PROF = process.env.BENCH_CPU_PROF;

/** Keeps process `pid` (all its threads) on `cpus` (a taskset list). */
export function pin(pid: number, cpus: string): void {
  const r = spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset ${cpus} ${pid} failed: ${r.stderr || r.error}`);
}

export const hasExited = (c: Child) =>
  c.proc.exitCode !== null || c.proc.signalCode !== null || c.proc.pid === undefined;

export function assertAllRunning(): void {
  const dead = children.find(hasExited);
  if (dead) throw new Error(`${dead.name} exited unexpectedly; its output:\n${dead.output() || '(none)'}`);
}

/** Polls `probe` until it returns true; fails when a child dies or after `timeoutMs`. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<void> {
  const ok = await eventually(
    () => {
      assertAllRunning();
      return probe().catch(() => false);
    },
    timeoutMs,
    intervalMs,
  );
  if (!ok) throw new Error(`timed out waiting for ${what}`);
}

/** Stops one child (SIGTERM, then SIGKILL after 5 s) and forgets it. */
export async function stop(child: Child): Promise<void> {
  const i = children.indexOf(child);
  if (i >= 0) children.splice(i, 1);
  if (hasExited(child)) return;
  child.proc.kill('SIGTERM');
  const killed = await Promise.race([child.exited.then(() => true), sleep(5000).then(() => false)]);
  if (!killed) {
    child.proc.kill('SIGKILL');
    await child.exited;
  }
}

export async function stopAll(): Promise<void> {
  // Reverse order: the servers go before the Redis they use.
  for (const child of [...children].reverse()) await stop(child);
}

// Last resort if we exit without awaiting stopAll (exceptions are handled in main; this covers the rest).
process.on('exit', () => children.forEach((c) => hasExited(c) || c.proc.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping children`);
    void stopAll().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Network helpers

/** Starts a private redis-server (no persistence) on a free port and waits until it answers. */
export async function startRedis(): Promise<{ child: Child; port: number; url: string }> {
  const port = await freePort();
  progress(`starting redis-server on ${port}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-bench-redis-'));
  const server = await startRedisProcess(dir, port);
  const child = adopt('redis-server', server.child);
  void child.exited.then(() => rmSync(dir, { recursive: true, force: true }));
  return { child, port, url: `redis://${HOST}:${port}` };
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/** One GraphQL POST (with `auth` headers); returns the raw body, failing on a non-200 or a response with errors. */
export async function graphql(
  url: string,
  query: string,
  auth: Record<string, string> = {},
  variables?: Record<string, unknown>,
) {
  const r = await postGraphQL(url, query, variables, auth.authorization?.replace(/^Bearer /, ''));
  if (r.status !== 200 || r.errors) throw new Error(`${url}: HTTP ${r.status}: ${r.text}`);
  return { text: r.text, data: r.data ?? {} };
}

/** Signs a fresh user up on the gateway at `baseUrl`; returns the name and the bearer header. */
export async function signUpBenchUser(baseUrl: string): Promise<{ username: string; auth: Record<string, string> }> {
  const { username, token } = await signUp(
    `${baseUrl}/graphql`,
    `bench_${randomBytes(6).toString('hex')}`,
    'benchpassword',
  );
  return { username, auth: { authorization: `Bearer ${token}` } };
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP load (autocannon)

export interface LoadTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The POST body. */
  body: string;
  /** The exact response body every request must get. */
  expectBody: string;
  /** Instead of `expectBody`: whether a response body is a right answer. */
  accepts?: (body: string) => boolean;
  /** The process serving it: its CPU per request is measured over each run. */
  pid?: number;
}

export interface LoadSample {
  rps: number;
  p50: number;
  p99: number;
  /** Requests written, and those answered (the last ones in flight when a run stops are sent, not answered). */
  sent: number;
  answered: number;
  /** `errors` includes `timeouts`. */
  bad: { non2xx: number; errors: number; timeouts: number; mismatches: number };
  /** The serving process's CPU (user + system) over the run per request answered, µs (with the target's pid). */
  cpuMicros?: number;
}

/** POSTs to `target` for `seconds` over `connections` keep-alive connections, no pipelining. */
export async function cannon(target: LoadTarget, seconds: number, connections: number): Promise<LoadSample> {
  const cpu0 = target.pid === undefined ? 0 : cpuSeconds(target.pid);
  const r = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    ...(target.accepts
      ? { verifyBody: (body: unknown) => target.accepts!(String(body)) }
      : { expectBody: target.expectBody }),
    connections,
    pipelining: 1,
    duration: seconds,
  });
  const cpu = target.pid === undefined ? undefined : cpuSeconds(target.pid) - cpu0;
  return {
    ...(cpu === undefined ? {} : { cpuMicros: (cpu * 1e6) / Math.max(1, r.requests.total) }),
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    sent: r.requests.sent,
    answered: r.requests.total,
    bad: { non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, mismatches: r.mismatches },
  };
}

/** Bad responses of a run: non-2xx, errors (timeouts included) and body mismatches. */
export const badCount = (s: LoadSample) => s.bad.non2xx + s.bad.errors + s.bad.mismatches;

export const sampleLine = (s: LoadSample) => {
  const bad = Object.entries(s.bad).filter(([, n]) => n > 0);
  return `${s.rps.toFixed(0)} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms${bad.length ? `, BAD: ${bad.map(([k, n]) => `${k}=${n}`).join(' ')}` : ''}`;
};

/**
 * A discarded warm-up of every target, then `rounds` rounds of every target, in order in odd rounds and reversed in
 * even ones (ABBA for two), so that none always runs right after another; the children are checked after each run.
 */
export async function alternate(
  targets: LoadTarget[],
  o: { rounds: number; seconds: number; warmupSeconds: number; connections: number },
): Promise<{ warmups: LoadSample[]; samples: LoadSample[][] }> {
  const warmups: LoadSample[] = [];
  for (const t of targets) {
    progress(`warm-up ${t.name} (${o.warmupSeconds}s, discarded)`);
    warmups.push(await cannon(t, o.warmupSeconds, o.connections));
  }
  const samples = targets.map((): LoadSample[] => []);
  for (let round = 1; round <= o.rounds; round++) {
    const order = targets.map((_, i) => i);
    if (round % 2 === 0) order.reverse();
    for (const i of order) {
      progress(`round ${round}/${o.rounds}: ${targets[i]!.name} (${o.seconds}s)`);
      const s = await cannon(targets[i]!, o.seconds, o.connections);
      assertAllRunning();
      samples[i]!.push(s);
      progress(`  ${sampleLine(s)}`);
    }
  }
  return { warmups, samples };
}

// ---------------------------------------------------------------------------------------------------------------
// CPU time

let clockTicks: number | undefined;

/** Clock ticks per second for /proc/<pid>/stat (`getconf CLK_TCK`, else 100). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    clockTicks = r.status === 0 && Number.isInteger(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 on: utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}

/** Runs a benchmark's main, stops every child whatever happens, and exits with main's code (1 on a throw). */
export async function runBench(main: () => Promise<number>, onFailure: () => void = () => undefined): Promise<never> {
  let code = 1;
  // Part of the configuration every table of the run was measured in.
  if (GATEWAY_CPUS)
    console.log(`every gateway this bench started ran pinned to CPUs ${GATEWAY_CPUS} (BENCH_GATEWAY_CPUS)`);
  try {
    code = await main();
  } catch (err) {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    onFailure();
  } finally {
    if (gatewayLimits.length)
      console.log(`\nrate limits of the gateways this run started: ${gatewayLimits.join('; ')}`);
    progress('stopping children');
    await stopAll();
  }
  process.exit(code);
}
