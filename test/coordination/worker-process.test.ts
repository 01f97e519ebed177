/**
 * How the worker runs: inside `npm start` unless WORKER=off, and as `npm run worker` beside a gateway on its
 * embedded Redis; SIGTERM stops it with exit code 0; while Redis is away, it says so once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { eventually, postGraphQL, redisEnv, uniqueName, uniquePrefix } from '../support/app.js';
import { spawnWorker, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { disposeLater } from '../support/dispose.js';
import { freePort, startRedisProcess } from '../support/redis-servers.js';

const SIGN_UP = 'mutation($u: String!) { signUp(username: $u, password: "password123") { token } }';
const CREATE_CHAT = 'mutation($m: [String!]!) { createChat(members: $m) { id } }';
const SCHEDULE =
  'mutation($c: ID!, $at: DateTime!) { scheduleMessage(chatId: $c, text: "hello later", sendAt: $at) { id } }';
const LAST_ID = 'query($c: ID!) { chat(id: $c) { lastMessageId } }';

/** Two users and a chat on gateway `g`; a message scheduled for now; a probe of the chat's last id. */
async function scheduleNow(g: GatewayProcess): Promise<() => Promise<number>> {
  const token = async (name: string) => {
    const r = await postGraphQL<{ signUp: { token: string } }>(g.url, SIGN_UP, { u: name });
    return r.data!.signUp.token;
  };
  const bob = uniqueName('bob');
  const ann = await token(uniqueName('ann'));
  await token(bob);
  const chat = await postGraphQL<{ createChat: { id: string } }>(g.url, CREATE_CHAT, { m: [bob] }, ann);
  const chatId = chat.data!.createChat.id;
  const scheduled = await postGraphQL(g.url, SCHEDULE, { c: chatId, at: new Date().toISOString() }, ann);
  expect(scheduled.errors).toBeUndefined();
  return async () =>
    (await postGraphQL<{ chat: { lastMessageId: number } }>(g.url, LAST_ID, { c: chatId }, ann)).data!.chat
      .lastMessageId;
}

/**
 * `npm run worker` on a redis-server of its own, once it has started: what it wrote, and its Redis, which the test
 * stops and starts again on the same port. Both go after the test.
 */
async function workerOnItsOwnRedis() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-worker-redis-'));
  const port = await freePort();
  let server = await startRedisProcess(dir, port);
  disposeLater(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const worker = spawnWorker({ REDIS_URL: `redis://127.0.0.1:${port}`, KEY_PREFIX: uniquePrefix() });
  let out = '';
  worker.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  worker.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  expect(await eventually(() => Promise.resolve(out.includes('"msg":"worker started"')), 15_000)).toBe(true);
  const redis = {
    stop: () => server.stop(),
    start: async () => void (server = await startRedisProcess(dir, port)),
  };
  return { worker, output: () => out, redis };
}

describe('the worker', () => {
  it('runs inside the gateway by default', async () => {
    const g = await startGateway({ ...redisEnv(), KEY_PREFIX: uniquePrefix(), QUEUE_POLL_MS: '50' });
    try {
      const lastId = await scheduleNow(g);
      expect(await eventually(async () => (await lastId()) === 1, 10_000)).toBe(true);
      expect(g.output()).toContain('"msg":"worker started"');
    } finally {
      expect((await stopGateway(g)).code).toBe(0);
    }
  });

  it.runIf(inject('redis').kind === 'standalone')(
    'with WORKER=off leaves tasks to `npm run worker`, which finds the embedded Redis and stops on SIGTERM',
    async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rig-worker-'));
      const g = await startGateway({ DATA_DIR: dataDir, WORKER: 'off' });
      try {
        const lastId = await scheduleNow(g);
        await sleep(1000);
        expect(await lastId()).toBe(0); // nobody sends it
        expect(g.output()).not.toContain('worker started');

        const worker = spawnWorker({ DATA_DIR: dataDir, QUEUE_POLL_MS: '50' });
        let out = '';
        worker.stdout?.on('data', (c: Buffer) => (out += c.toString()));
        worker.stderr?.on('data', (c: Buffer) => (out += c.toString()));
        const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
        expect(await eventually(async () => (await lastId()) === 1, 15_000)).toBe(true);
        worker.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(out).toContain('"msg":"worker stopped"');
      } finally {
        expect((await stopGateway(g)).code).toBe(0);
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );

  // Its own redis-server, stopped under it: one run is enough (the harness's Redis plays no part).
  it.runIf(inject('redis').kind === 'standalone')(
    'on SIGTERM while Redis is away, stops within SHUTDOWN_TIMEOUT_MS and exits 0',
    async () => {
      const { worker, output, redis } = await workerOnItsOwnRedis();
      const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
      await redis.stop();
      await sleep(3000); // the telemetry's timer ticks on, each flush failing after the client's retries
      worker.kill('SIGTERM');
      // Not a speed check: with the default SHUTDOWN_TIMEOUT_MS (8 s) the stop ends by then; before the fix it
      // waited out every queued telemetry flush and each Redis step's retries, one after another, for 50 s or more.
      const code = await Promise.race([exited, sleep(30_000).then(() => 'still running after 30 s')]);
      expect(code, output()).toBe(0);
      expect(output()).toContain('"msg":"worker stopped"');
    },
    60_000,
  );

  it.runIf(inject('redis').kind === 'standalone')(
    'says once that its heartbeats fail while Redis is away, and once that they beat again when it is back',
    async () => {
      const { output, redis } = await workerOnItsOwnRedis();
      const said = (msg: string) => eventually(() => Promise.resolve(output().includes(`"msg":"${msg}"`)), 15_000);
      await redis.stop();
      expect(await said('heartbeat failed')).toBe(true);
      await sleep(2500); // more beats fail, one a second on each queue
      await redis.start();
      expect(await said('heartbeat restored'), output()).toBe(true);
      expect(output().match(/"msg":"heartbeat (failed|restored)"/g)).toEqual([
        '"msg":"heartbeat failed"',
        '"msg":"heartbeat restored"',
      ]);
    },
    60_000,
  );
});
