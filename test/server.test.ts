import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { eventually, postGraphQL, redisEnv, startTestApp, uniqueName, uniquePrefix, wsRequest } from './support/app.js';
import { MESSAGE_ADDED, createChat, record, send } from './support/chats.js';
import { spawnGateway, startGateway, stopGateway } from './support/gateway-process.js';
import { freePort, startRedisProcess } from './support/redis-servers.js';

const SIGN_UP = 'mutation($u: String!) { signUp(username: $u, password: "password123") { token } }';
const SIGN_IN = 'mutation($u: String!) { signIn(username: $u, password: "password123") { user { username } } }';

function openSocket(url: string): Promise<{ socket: WebSocket; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace('http', 'ws'), 'graphql-transport-ws');
    const closed = new Promise<number>((r) => socket.once('close', (code) => r(code)));
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
    socket.once('message', (data: Buffer) => {
      const message = data.toString();
      if ((JSON.parse(message) as { type: string }).type === 'connection_ack') resolve({ socket, closed });
      else reject(new Error(message));
    });
    socket.once('error', reject);
  });
}

describe('graceful stop', () => {
  it('on SIGTERM closes sockets with 1001, finishes the in-flight request, and exits 0 within 10 s', async () => {
    const g = await startGateway({ ...redisEnv(), KEY_PREFIX: uniquePrefix() });
    const { closed } = await openSocket(g.url);

    // An in-flight request: headers and half the body sent before the signal, the rest after.
    const body = JSON.stringify({ query: SIGN_UP, variables: { u: uniqueName('inflight') } });
    let status = 0;
    const response = new Promise<string>((resolve, reject) => {
      const req = request(g.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        status = res.statusCode ?? 0;
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.write(body.slice(0, 20));
      setTimeout(() => {
        g.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(20)), 300);
      }, 300);
    });

    expect(await closed).toBe(1001);
    const text = await response;
    expect(status).toBe(200);
    expect(text).toContain('"token"');
    const started = Date.now();
    const { code } = await g.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('reconnection', () => {
  it('reports not ready while Redis is away and recovers by itself when it returns', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-reconnect-'));
    const port = await freePort();
    let redis = await startRedisProcess(dir, port);
    const t = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_CLUSTER_NODES: '' });
    const readyz = t.url.replace('/graphql', '/readyz');
    try {
      expect((await fetch(readyz)).status).toBe(200);
      await redis.stop();
      expect(await eventually(async () => (await fetch(readyz)).status === 503, 5000)).toBe(true);
      expect((await t.gql('mutation { signIn(username: "x_x_x", password: "password123") { token } }')).errors?.[0]?.extensions?.code).toBe(
        'INTERNAL_SERVER_ERROR',
      );
      redis = await startRedisProcess(dir, port);
      expect(await eventually(async () => (await fetch(readyz)).status === 200, 10_000)).toBe(true);
      await t.signUp();
    } finally {
      await t.close();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the gateway log', () => {
  it("keeps the gateway's warnings and errors while Redis is away and writes them to recentLogs once it is back", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-gatewaylog-'));
    const port = await freePort();
    let redis = await startRedisProcess(dir, port);
    const g = await startGateway({ REDIS_URL: `redis://127.0.0.1:${port}`, KEY_PREFIX: uniquePrefix(), ADMIN_USERS: 'admin', WORKER: 'off' });
    try {
      await redis.stop();
      // While Redis is away: the client's connection warnings, and a request that fails (an error).
      expect((await postGraphQL(g.url, SIGN_IN, { u: 'admin' })).errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
      redis = await startRedisProcess(dir, port); // empty: this server keeps no data across restarts
      const signUp = () => postGraphQL<{ signUp: { token: string } }>(g.url, SIGN_UP, { u: 'admin' }).then((r) => r.data?.signUp.token);
      let token: string | undefined;
      expect(await eventually(async () => Boolean((token = await signUp())), 10_000)).toBe(true);
      const read = async (severity: string) =>
        (await postGraphQL<{ recentLogs: string[] }>(g.url, 'query($s: LogSeverity) { recentLogs(name: "gateway", severity: $s) }', { s: severity }, token)).data
          ?.recentLogs ?? [];
      expect(await eventually(async () => (await read('WARNING')).some((l) => l.includes('redis connection error')), 15_000)).toBe(true);
      expect(await eventually(async () => (await read('ERROR')).length > 0, 5000)).toBe(true);
    } finally {
      await stopGateway(g);
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Redis killed and restarted from its AOF', () => {
  it('keeps live subscriptions: they catch up after the restart; operations meanwhile get a masked error, the socket stays', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-aof-'));
    const port = await freePort();
    const aof = ['--appendonly', 'yes', '--appendfsync', 'always'];
    let redis = await startRedisProcess(dir, port, aof);
    const t = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_CLUSTER_NODES: '', POLL_IDLE_MS: '200' });
    try {
      const [ann, bob] = [await t.signUp(), await t.signUp()];
      const chatId = await createChat(t, ann.token, [bob.username], 'before');
      const client = t.wsClient(bob.token);
      const live = record(client, MESSAGE_ADDED, { c: chatId });
      await live.until((items) => items.length === 1);

      await redis.stop(); // SIGKILL
      const during = await wsRequest(client, '{ me { id } }');
      expect(during.errors?.[0]).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });

      redis = await startRedisProcess(dir, port, aof);
      expect(await eventually(async () => (await t.gql('{ me { id } }', {}, ann.token)).data?.me !== undefined, 10_000)).toBe(true);
      await send(t, ann.token, chatId, 'after');
      await live.until((items) => items.length === 2, 15_000);
      expect(live.items.map((m) => m.text)).toEqual(['before', 'after']);
      expect(live.closed).toBeNull();
      expect(await wsRequest(client, '{ me { id } }')).toEqual({ data: { me: { id: bob.username } } });
    } finally {
      await t.close();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** redis-server processes whose command line names this data directory (Linux /proc). */
function redisServersOn(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmd.includes('redis-server') && cmd.includes(dataDir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

// The embedded Redis is the same whichever Redis the project tests against; run it once.
describe.runIf(inject('redis').kind === 'standalone')('the embedded redis-server', () => {
  const embeddedEnv = (dataDir: string) => ({ DATA_DIR: dataDir });
  const dataDirs: string[] = [];
  const newDataDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-embedded-'));
    dataDirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('persists users across a clean restart', async () => {
    const dataDir = newDataDir();
    const name = uniqueName('keep');
    const first = await startGateway(embeddedEnv(dataDir));
    expect((await postGraphQL(first.url, SIGN_UP, { u: name })).errors).toBeUndefined();
    expect((await stopGateway(first)).code).toBe(0);
    expect(redisServersOn(dataDir)).toEqual([]);

    const second = await startGateway(embeddedEnv(dataDir));
    expect((await postGraphQL(second.url, SIGN_IN, { u: name })).data).toEqual({ signIn: { user: { username: name } } });
    expect((await stopGateway(second)).code).toBe(0);
  });

  it('after a SIGKILL of the gateway, starts again with one redis-server and every user', async () => {
    const dataDir = newDataDir();
    const name = uniqueName('kill');
    const first = await startGateway(embeddedEnv(dataDir));
    expect((await postGraphQL(first.url, SIGN_UP, { u: name })).errors).toBeUndefined();
    await stopGateway(first, 'SIGKILL');
    expect(redisServersOn(dataDir)).toHaveLength(1); // left behind by the killed gateway

    const second = await startGateway(embeddedEnv(dataDir));
    expect(redisServersOn(dataDir)).toHaveLength(1);
    expect((await postGraphQL(second.url, SIGN_IN, { u: name })).data).toEqual({ signIn: { user: { username: name } } });

    // A second gateway on the same data directory refuses to start rather than run a second server.
    const intruder = spawnGateway(embeddedEnv(dataDir));
    let stderr = '';
    intruder.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => intruder.once('exit', r));
    expect(code).toBe(1);
    expect(stderr).toMatch(/in use by the gateway/);
    expect(redisServersOn(dataDir)).toHaveLength(1);

    expect((await stopGateway(second)).code).toBe(0);
    expect(redisServersOn(dataDir)).toEqual([]);
  });

  it.each([
    ['REDIS_SERVER_BIN names nothing', { REDIS_SERVER_BIN: '/nonexistent/redis-server' }],
    ['redis-server is not on PATH', { PATH: '/nonexistent' }],
  ])('fails to start in one line naming the install command when %s', async (_why, env) => {
    const dataDir = newDataDir();
    const child = spawnGateway({ DATA_DIR: dataDir, ...env });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/apt-get install redis-server/);
    expect(lines[0]).toMatch(/brew install redis/);
    expect(lines[0]).toMatch(/REDIS_URL/);
  });
});
