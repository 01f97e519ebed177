/**
 * What the gateway logs keeps secrets out: a Redis error names its command but not the command's arguments (ioredis
 * puts them on its errors, and the connection's HELLO carries REDIS_URL's password).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { eventually, uniquePrefix } from '../support/app.js';
import { disposeLater } from '../support/dispose.js';
import { startGateway, stopGateway } from '../support/gateway-process.js';
import { freePort, startRedisProcess } from '../support/redis-servers.js';

describe('the gateway log', () => {
  // Its own redis-server: once is enough.
  it.runIf(inject('redis').kind === 'standalone')(
    'names a failed Redis command without its arguments: a wrong REDIS_URL password is never written',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-test-secrets-'));
      const redis = await startRedisProcess(dir, await freePort());
      disposeLater(async () => {
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      });
      const admin = new Redis({ port: redis.port, host: '127.0.0.1' });
      await admin.config('SET', 'requirepass', 'the-right-one');
      admin.disconnect();

      const password = 'hunter2-not-the-password';
      const gateway = await startGateway({
        REDIS_URL: `redis://:${password}@127.0.0.1:${redis.port}`,
        KEY_PREFIX: uniquePrefix(),
        WORKER: 'off',
      });
      // The connection's HELLO is refused, and the gateway says so, naming the command.
      expect(
        await eventually(() => Promise.resolve(/WRONGPASS[^\n]*"command":\{"name":"hello"\}/.test(gateway.output()))),
      ).toBe(true);
      await stopGateway(gateway);
      expect(gateway.output()).not.toContain(password);
    },
  );
});
