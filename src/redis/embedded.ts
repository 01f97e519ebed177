/**
 * The embedded default: a `redis-server` child process on a private unix socket, persisting under DATA_DIR
 * with AOF (appendfsync everysec) and RDB snapshots, as chapter 4 of the book recommends.
 *
 * A server that dies is started again (startEmbeddedRedis), until the gateway is stopping. It runs in a process group
 * of its own, so that a signal to the gateway's group (Ctrl-C in a terminal) reaches only the gateway, whose stop
 * stops the server last. One data directory never gets two servers. `gateway.pid` names the gateway that owns the
 * directory and `redis.pid` (written by Redis) the server. On start: a live owner gateway → refuse; a server left
 * behind by a gateway that died (SIGKILL) → stop it (SIGTERM makes it persist and exit) and start our own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, type RedisTarget } from '../config.js';
import { checkEndpoint, type RedisEndpoint } from './clients.js';

export interface EmbeddedRedis {
  socketPath: string;
  /** The gateway is stopping: a server that dies from now on is not started again. */
  draining(): void;
  stop(): Promise<void>;
  /** Kills the server at once and removes what it leaves (a second signal cut the graceful stop short). */
  stopNow(): Promise<void>;
}

const INSTALL_HINT =
  'redis-server was not found on PATH: install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), set REDIS_SERVER_BIN, or point the gateway at a running Redis with REDIS_URL';

function findOnPath(bin: string): string | undefined {
  if (bin.includes('/')) return isExecutable(bin) ? bin : undefined;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, bin);
    if (dir && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of a live process, where the OS exposes it (Linux /proc); undefined elsewhere. */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return undefined;
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/** Unix socket paths are limited to ~104 bytes; fall back to a per-directory name under the temp dir. */
function socketPathFor(dataDir: string): string {
  const inDir = path.join(dataDir, 'redis.sock');
  if (Buffer.byteLength(inDir) <= 100) return inDir;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `rig-redis-${digest}.sock`);
}

async function canConnect(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Where a process other than the gateway (`npm run worker`, the CLIs) connects: the configured Redis, or the
 * embedded Redis of a gateway running on the same DATA_DIR.
 */
export async function endpointOf(target: RedisTarget): Promise<RedisEndpoint> {
  if (target.kind === 'embedded') return { kind: 'socket', path: await runningEmbeddedRedis(target.dataDir) };
  await checkEndpoint(target);
  return target;
}

/** The socket of the embedded Redis a running gateway started in `dataDir`. */
async function runningEmbeddedRedis(dataDir: string): Promise<string> {
  const socketPath = socketPathFor(dataDir);
  if (!(await canConnect(socketPath))) {
    throw new ConfigError(
      `no embedded Redis is running for DATA_DIR ${dataDir}: start the gateway first (npm start), or point the worker at a Redis with REDIS_URL or REDIS_CLUSTER_NODES`,
    );
  }
  return socketPath;
}

async function stopLeftover(dataDir: string, log: Logger): Promise<void> {
  const ownerPid = readPid(path.join(dataDir, 'gateway.pid'));
  if (
    ownerPid !== undefined &&
    ownerPid !== process.pid &&
    isAlive(ownerPid) &&
    /node|tsx/.test(commandLine(ownerPid) ?? 'node')
  ) {
    throw new ConfigError(
      `DATA_DIR ${dataDir} is in use by the gateway with pid ${ownerPid}; stop it, choose another DATA_DIR, or share one Redis through REDIS_URL`,
    );
  }
  const redisPid = readPid(path.join(dataDir, 'redis.pid'));
  if (redisPid === undefined || !isAlive(redisPid)) return;
  const cmd = commandLine(redisPid);
  if (cmd !== undefined && !cmd.includes('redis-server')) return; // a stale pid file; the pid was reused
  log.warn({ redisPid, dataDir }, 'stopping the redis-server left behind by a gateway that did not exit cleanly');
  process.kill(redisPid, 'SIGTERM');
  if (!(await waitForExit(redisPid, 15_000))) {
    process.kill(redisPid, 'SIGKILL');
    await waitForExit(redisPid, 2000);
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  serverBin?: string | undefined;
  log: Logger;
  /** How long a crashed server may take to come back before `onGiveUp`. */
  restartMs: number;
  /** Called once when the server could not be restarted in time (the gateway then exits non-zero). */
  onGiveUp: (reason: string) => void;
}

/** How long one start may take to open its socket (an AOF being loaded counts as started). */
const START_MS = 15_000;

/**
 * Starts the embedded server and supervises it: if it dies (the OOM killer, kill -9), it is started again on the same
 * data directory (its AOF), with backoff, until it answers or `restartMs` has passed.
 */
export async function startEmbeddedRedis(opts: EmbeddedOptions): Promise<EmbeddedRedis> {
  const { dataDir, log } = opts;
  const bin = findOnPath(opts.serverBin ?? 'redis-server');
  if (!bin) throw new ConfigError(INSTALL_HINT);
  mkdirSync(dataDir, { recursive: true });
  await stopLeftover(dataDir, log);
  writeFileSync(path.join(dataDir, 'gateway.pid'), String(process.pid));

  const socketPath = socketPathFor(dataDir);
  const args = [
    '--port',
    '0',
    '--unixsocket',
    socketPath,
    '--unixsocketperm',
    '700',
    '--dir',
    dataDir,
    '--pidfile',
    path.join(dataDir, 'redis.pid'),
    '--logfile',
    path.join(dataDir, 'redis.log'),
    '--daemonize',
    'no',
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--save',
    '900 1 300 10 60 10000',
  ];
  let stopping = false;
  let current: { child: ChildProcess; exited: Promise<void>; done: () => boolean };
  // If this process dies without running stop() (an uncaught exception), do not leave the server behind.
  const onExit = () => current.child.kill('SIGTERM');
  process.once('exit', onExit);

  /** Spawns a server and waits until its socket accepts connections; throws when it exits or takes too long. */
  async function spawnServer(): Promise<void> {
    rmSync(socketPath, { force: true });
    // Its own process group: a signal to the gateway's group must not stop it while the gateway still drains.
    const child = spawn(bin!, args, { stdio: 'ignore', detached: true });
    let exited = false;
    const exitedPromise = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
    current = { child, exited: exitedPromise, done: () => exited };
    const deadline = Date.now() + START_MS;
    while (!(await canConnect(socketPath))) {
      if (exited) throw new Error(`redis-server exited during start; see ${path.join(dataDir, 'redis.log')}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(
          `redis-server did not open ${socketPath} within ${START_MS / 1000} s; see ${path.join(dataDir, 'redis.log')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    log.info({ redisPid: child.pid, socketPath, dataDir }, 'embedded redis-server started');
    void exitedPromise.then(() => {
      if (!stopping && current.child === child) void restart(child);
    });
  }

  /** The server died on its own: start it again with backoff, or give up after `restartMs`. */
  async function restart(dead: ChildProcess): Promise<void> {
    const crashed = Date.now();
    log.error(
      { redisPid: dead.pid, code: dead.exitCode, signal: dead.signalCode },
      'embedded redis-server died; restarting it',
    );
    for (let attempt = 1; !stopping; attempt++) {
      const left = opts.restartMs - (Date.now() - crashed);
      if (left <= 0) break;
      await new Promise((r) => setTimeout(r, Math.min(left, 100 * 2 ** Math.min(attempt - 1, 6))));
      if (stopping) return;
      try {
        await spawnServer();
        log.warn({ attempt, ms: Date.now() - crashed }, 'embedded redis-server restarted');
        return;
      } catch (err) {
        log.error({ err, attempt }, 'embedded redis-server restart failed');
      }
    }
    if (!stopping)
      opts.onGiveUp(
        `the embedded redis-server could not be restarted within ${opts.restartMs} ms; see ${path.join(dataDir, 'redis.log')}`,
      );
  }

  /** Ends supervision, sends `signal` to the server (SIGKILL after 8 s) and waits for it to exit. */
  async function end(signal: NodeJS.Signals): Promise<void> {
    stopping = true;
    process.off('exit', onExit);
    if (!current.done()) {
      current.child.kill(signal);
      const timer = setTimeout(() => current.child.kill('SIGKILL'), 8000);
      await current.exited;
      clearTimeout(timer);
    }
    rmSync(path.join(dataDir, 'gateway.pid'), { force: true });
  }

  await spawnServer();
  return {
    socketPath,
    draining() {
      stopping = true;
    },
    async stop() {
      await end('SIGTERM'); // Redis persists (RDB save + AOF fsync) and exits on SIGTERM
      log.info('embedded redis-server stopped');
    },
    async stopNow() {
      // No RDB save: the AOF already has every write Redis acknowledged (written before the reply).
      await end('SIGKILL');
      for (const file of [path.join(dataDir, 'redis.pid'), socketPath]) rmSync(file, { force: true });
      log.warn('embedded redis-server killed');
    },
  };
}
