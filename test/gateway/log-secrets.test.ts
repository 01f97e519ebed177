/**
 * Redis credentials: a wrong REDIS_URL password stops the start in one line naming the setting, and what the gateway
 * logs never carries a Redis command's arguments (ioredis puts them on its errors, and a connection's HELLO carries
 * the password).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { eventually, uniquePrefix } from '../support/app.js';
import { disposeLater } from '../support/dispose.js';
import { spawnGateway, startGateway, stopGateway } from '../support/gateway-process.js';
import { freePort, startRedisProcess } from '../support/redis-servers.js';

/** A redis-server of its own that asks for `password`, and a client of it that knows the password. */
async function guardedRedis(password: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-test-secrets-'));
  const server = await startRedisProcess(dir, await freePort());
  const admin = new Redis({ port: server.port, host: '127.0.0.1' });
  await admin.config('SET', 'requirepass', password);
  await admin.auth(password);
  disposeLater(async () => {
    admin.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { admin, url: (p: string) => `redis://:${p}@127.0.0.1:${server.port}` };
}

// Each its own redis-server: once is enough.
describe.runIf(inject('redis').kind === 'standalone')('Redis credentials', () => {
  it('a wrong REDIS_URL password stops the start in one line naming REDIS_URL, not the password', async () => {
    const redis = await guardedRedis('the-right-one');
    const wrong = 'hunter2-not-the-password';
    const child = spawnGateway({ REDIS_URL: redis.url(wrong), KEY_PREFIX: uniquePrefix(), PORT: '0' });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    expect(await new Promise<number | null>((r) => child.once('exit', r))).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(/^gateway: REDIS_URL: Redis refused its credentials \(WRONGPASS .+\)$/),
    ]);
    expect(output).not.toContain(wrong);
  });

  it('logs a Redis error naming its command without its arguments: a rotated password is never written', async () => {
    const first = 'first-password-of-redis';
    const redis = await guardedRedis(first);
    const gateway = await startGateway({ REDIS_URL: redis.url(first), KEY_PREFIX: uniquePrefix(), WORKER: 'off' });
    // The password changes under the running gateway: its connections, cut, reconnect with the old one.
    await redis.admin.config('SET', 'requirepass', 'second-password');
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    expect(
      await eventually(() => Promise.resolve(/WRONGPASS[^\n]*"command":\{"name":"hello"\}/.test(gateway.output()))),
    ).toBe(true);
    await stopGateway(gateway);
    expect(gateway.output()).not.toContain(first);
  });
});
