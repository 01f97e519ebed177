/**
 * RedLock's independent servers for tests: standalone redis-servers without persistence (each its own process), which
 * a test kills (SIGKILL) and starts again empty on the same port. They stop with the file (or test) that made them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { disposeLater } from './dispose.js';
import { freePort, startRedisProcess, type RedisProcess } from './redis-servers.js';

export interface RedlockServers {
  /** REDLOCK_NODES's value. */
  urls: string[];
  /** A connection of the test's own to server `i` (it reconnects after a restart). */
  client(i: number): Redis;
  /** Kills server `i` (SIGKILL): its keys die with it. */
  kill(i: number): Promise<void>;
  /** Starts server `i` again on its port, empty. */
  restart(i: number): Promise<void>;
}

export async function startRedlockServers(count = 5): Promise<RedlockServers> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-test-redlock-'));
  const servers: RedisProcess[] = [];
  for (let i = 0; i < count; i++) servers.push(await startRedisProcess(dir, await freePort()));
  const clients = servers.map(({ port }) => {
    const c = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    c.on('error', () => undefined); // a killed server refuses until it is started again
    return c;
  });
  disposeLater(async () => {
    clients.forEach((c) => c.disconnect());
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    urls: servers.map(({ port }) => `redis://127.0.0.1:${port}`),
    client: (i) => clients[i]!,
    kill: (i) => servers[i]!.stop(),
    async restart(i) {
      servers[i] = await startRedisProcess(dir, servers[i]!.port);
    },
  };
}
