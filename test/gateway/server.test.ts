import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  eventually,
  postGraphQL,
  redisEnv,
  sseClient,
  sseRecord,
  startTestApp,
  uniqueName,
  uniquePrefix,
  wsClient,
  wsRequest,
} from '../support/app.js';
import { CREATE_CHAT, MESSAGE_ADDED, createChat, record, send } from '../support/chats.js';
import { spawnGateway, startGateway, stopGateway } from '../support/gateway-process.js';
import { freePort, startRedisProcess } from '../support/redis-servers.js';

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
      const req = request(
        g.url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          status = res.statusCode ?? 0;
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        },
      );
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

describe('graceful stop with subscriptions over HTTP', () => {
  it('ends SSE and multipart streams as their transports do (complete, closing boundary) and does not wait for them', async () => {
    // SHUTDOWN_TIMEOUT_MS at 60 s: a stop that waited for the open streams would outlast this test's own timeout.
    const g = await startGateway({ ...redisEnv(), KEY_PREFIX: uniquePrefix(), SHUTDOWN_TIMEOUT_MS: '60000' });
    const token = async (name: string) =>
      (await postGraphQL<{ signUp: { token: string } }>(g.url, SIGN_UP, { u: name })).data!.signUp.token;
    const bob = uniqueName('bob');
    const [ann, bobToken] = await Promise.all([token(uniqueName('ann')), token(bob)]);
    /** A subscription over one HTTP response, its body read to its end ('cut' when the connection broke). */
    const open = async (accept: string) => {
      const res = await fetch(g.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${bobToken}` },
        body: JSON.stringify({ query: MESSAGE_ADDED }),
      });
      const read = { text: '', ended: undefined as Promise<string> | undefined };
      read.ended = (async () => {
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        for (let next = await reader.read(); !next.done; next = await reader.read())
          read.text += decoder.decode(next.value, { stream: true });
        return read.text;
      })().catch(() => 'cut');
      return read;
    };
    const sse = await open('text/event-stream');
    const multipart = await open('multipart/mixed;subscriptionSpec="1.0", application/json');
    // graphql-sse's single connection, not lazy: the client keeps its stream open until the gateway ends it.
    const client = sseClient(g.url, bobToken, { singleConnection: true, lazy: false, retryAttempts: 0 });
    const single = sseRecord(client, MESSAGE_ADDED);
    try {
      await postGraphQL(g.url, CREATE_CHAT, { m: [bob], t: 'before the stop' }, ann);
      expect(
        await eventually(
          () =>
            Promise.resolve(
              sse.text.includes('before the stop') &&
                multipart.text.includes('before the stop') &&
                single.results.length === 1,
            ),
          10_000,
        ),
      ).toBe(true);
      g.child.kill('SIGTERM');
      expect((await g.exited).code, g.output()).toBe(0);
      expect(await sse.ended).toMatch(/event: complete\ndata:\s*$/);
      expect(await multipart.ended).toMatch(/\r\n--graphql--\r\n$/);
      await single.until(() => single.completed || single.error !== undefined);
      expect(single.error).toBeUndefined();
    } finally {
      client.dispose();
    }
  });
});

describe.runIf(inject('redis').kind === 'standalone')('graceful stop while Redis is away', () => {
  it('ends within SHUTDOWN_TIMEOUT_MS with exit 0, not at the hard deadline with exit 1', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-stop-away-'));
    const port = await freePort();
    const redis = await startRedisProcess(dir, port);
    try {
      const g = await startGateway({ REDIS_URL: `redis://127.0.0.1:${port}`, KEY_PREFIX: uniquePrefix() });
      await redis.stop();
      await new Promise((resolve) => setTimeout(resolve, 3000)); // the telemetry's timer ticks on meanwhile
      // Before the fix, the telemetry's queued flushes, the worker's returns one queue after another and a QUIT
      // waiting on the reconnection's retries ran past SHUTDOWN_TIMEOUT_MS + 1.5 s: "graceful stop took too long".
      const { code } = await stopGateway(g);
      expect(code, g.output()).toBe(0);
      expect(g.output()).toContain('"msg":"stopped"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
      expect(await eventually(async () => (await fetch(readyz)).status === 200)).toBe(true); // connected
      await redis.stop();
      expect(await eventually(async () => (await fetch(readyz)).status === 503, 5000)).toBe(true);
      expect(
        (await t.gql('mutation { signIn(username: "x_x_x", password: "password123") { token } }')).errors?.[0]
          ?.extensions?.code,
      ).toBe('INTERNAL_SERVER_ERROR');
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
    const g = await startGateway({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      KEY_PREFIX: uniquePrefix(),
      ADMIN_USERS: 'admin',
      WORKER: 'off',
    });
    try {
      await redis.stop();
      // While Redis is away: the client's connection warnings, and a request that fails (an error).
      expect((await postGraphQL(g.url, SIGN_IN, { u: 'admin' })).errors?.[0]?.extensions?.code).toBe(
        'INTERNAL_SERVER_ERROR',
      );
      redis = await startRedisProcess(dir, port); // empty: this server keeps no data across restarts
      const signUp = () =>
        postGraphQL<{ signUp: { token: string } }>(g.url, SIGN_UP, { u: 'admin' }).then((r) => r.data?.signUp.token);
      let token: string | undefined;
      expect(await eventually(async () => Boolean((token = await signUp())), 10_000)).toBe(true);
      const read = async (severity: string) =>
        (
          await postGraphQL<{ recentLogs: string[] }>(
            g.url,
            'query($s: LogSeverity) { recentLogs(name: "gateway", severity: $s) }',
            { s: severity },
            token,
          )
        ).data?.recentLogs ?? [];
      expect(
        await eventually(async () => (await read('WARNING')).some((l) => l.includes('redis connection error')), 15_000),
      ).toBe(true);
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
    const t = await startTestApp({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_CLUSTER_NODES: '',
      POLL_AUDIT_MS: '200',
    });
    try {
      const [ann, bob] = [await t.signUp(), await t.signUp()];
      const chatId = await createChat(t, ann.token, [bob.username], 'before');
      const client = t.wsClient(bob.token);
      const live = record(client, MESSAGE_ADDED, { c: chatId });
      await live.until((items) => items.length === 1);

      await redis.stop(); // SIGKILL
      const during = await wsRequest(client, '{ me { id } }');
      expect(during.errors?.[0]).toMatchObject({
        message: 'Unexpected error.',
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      });

      redis = await startRedisProcess(dir, port, aof);
      expect(
        await eventually(async () => (await t.gql('{ me { id } }', {}, ann.token)).data?.me !== undefined, 10_000),
      ).toBe(true);
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

/**
 * Opens a request whose body never ends, so that a graceful stop drains until SHUTDOWN_TIMEOUT_MS; resolves once the
 * gateway has its headers (a request after it on another connection has been answered).
 */
async function holdRequest(url: string): Promise<void> {
  const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 1000 } });
  req.on('error', () => {}); // closed at the shutdown deadline
  req.write('{"query":');
  await postGraphQL(url, '{ __typename }');
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
    expect((await postGraphQL(second.url, SIGN_IN, { u: name })).data).toEqual({
      signIn: { user: { username: name } },
    });
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
    expect((await postGraphQL(second.url, SIGN_IN, { u: name })).data).toEqual({
      signIn: { user: { username: name } },
    });

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

  it('restarts a redis-server that was killed, on its AOF: acknowledged writes survive, operations and subscriptions resume', async () => {
    const dataDir = newDataDir();
    const gateway = await startGateway(embeddedEnv(dataDir));
    try {
      const name = uniqueName('crash');
      const signUp = await postGraphQL<{ signUp: { token: string } }>(gateway.url, SIGN_UP, { u: name });
      const token = signUp.data!.signUp.token;
      const chatId = (
        await postGraphQL<{ createChat: { id: string } }>(
          gateway.url,
          'mutation { createChat(members: [], message: "before") { id } }',
          {},
          token,
        )
      ).data!.createChat.id;
      const client = wsClient(gateway.url.replace('http', 'ws'), token, {
        retryAttempts: 20,
        retryWait: () => new Promise((r) => setTimeout(r, 200)),
      });
      const live = record(client, MESSAGE_ADDED, { c: chatId });
      await live.until((items) => items.length === 1);

      const [pid] = redisServersOn(dataDir);
      const killed = Date.now();
      process.kill(pid!, 'SIGKILL');
      const base = gateway.url.replace('/graphql', '');
      expect(await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 20_000, 20)).toBe(true);
      console.log(`embedded redis-server killed with SIGKILL: /readyz 200 again after ${Date.now() - killed} ms`);
      expect(redisServersOn(dataDir)).toHaveLength(1);
      expect(redisServersOn(dataDir)[0]).not.toBe(pid);
      expect(gateway.output()).toMatch(/"msg":"embedded redis-server died; restarting it"/);
      expect(gateway.output()).toMatch(/"msg":"embedded redis-server restarted"/);

      // The user, the session and the chat were acknowledged before the kill: all there.
      expect((await postGraphQL(gateway.url, '{ me { username } }', {}, token)).data).toEqual({
        me: { username: name },
      });
      expect(
        await eventually(
          async () =>
            (
              await postGraphQL(
                gateway.url,
                'mutation($c: ID!) { sendMessage(chatId: $c, text: "after") { id } }',
                { c: chatId },
                token,
              )
            ).errors === undefined,
          10_000,
        ),
      ).toBe(true);
      await live.until((items) => items.some((m) => m.text === 'after'), 20_000);
      expect(live.items.map((m) => m.text)).toEqual(expect.arrayContaining(['before', 'after']));
      await client.dispose();
    } finally {
      const stopped = await stopGateway(gateway);
      expect(stopped.code, gateway.output()).toBe(0);
    }
    expect(redisServersOn(dataDir)).toEqual([]);
  });

  it('exits non-zero when the killed redis-server cannot be restarted within EMBEDDED_RESTART_MS', async () => {
    const dataDir = newDataDir();
    const gateway = await startGateway({ ...embeddedEnv(dataDir), EMBEDDED_RESTART_MS: '2000' });
    expect((await postGraphQL(gateway.url, SIGN_UP, { u: uniqueName('gone') })).errors).toBeUndefined();
    // An append-only file that no longer parses: every restart fails while loading it.
    const aofDir = path.join(dataDir, 'appendonlydir');
    const incr = readdirSync(aofDir).find((f) => f.endsWith('.incr.aof'))!;
    appendFileSync(path.join(aofDir, incr), 'not a command\r\n');
    process.kill(redisServersOn(dataDir)[0]!, 'SIGKILL');
    const { code } = await gateway.exited;
    expect(code).toBe(1);
    expect(gateway.output()).toMatch(/could not be restarted within 2000 ms/);
    expect(redisServersOn(dataDir)).toEqual([]);
  });

  it('on Ctrl-C (SIGINT to its process group) drains on its redis-server, then stops it: exit 0, nothing left', async () => {
    const dataDir = newDataDir();
    const gateway = await startGateway({ ...embeddedEnv(dataDir), SHUTDOWN_TIMEOUT_MS: '2000' }, { detached: true });
    // The stop drains for 2 s, long past the few milliseconds a redis-server takes to stop on a signal of its own.
    await holdRequest(gateway.url);
    process.kill(-gateway.child.pid!, 'SIGINT');
    const { code } = await gateway.exited;
    expect(code, gateway.output()).toBe(0);
    expect(gateway.output()).not.toMatch(/died; restarting/);
    expect(gateway.output().match(/"msg":"embedded redis-server started"/g)).toHaveLength(1);
    expect(gateway.output()).toMatch(/"msg":"embedded redis-server stopped"/);
    expect(redisServersOn(dataDir)).toEqual([]);
  });

  it('does not restart a redis-server stopped with it (systemd KillMode=control-group signals both)', async () => {
    const dataDir = newDataDir();
    const gateway = await startGateway({ ...embeddedEnv(dataDir), SHUTDOWN_TIMEOUT_MS: '2000' });
    await holdRequest(gateway.url);
    const [redisPid] = redisServersOn(dataDir);
    gateway.child.kill('SIGTERM');
    process.kill(redisPid!, 'SIGTERM');
    // The drain then runs without Redis (its exit code is the hard deadline's 1, hence KillMode=mixed in the README).
    await gateway.exited;
    expect(gateway.output()).not.toMatch(/died; restarting/);
    expect(redisServersOn(dataDir)).toEqual([]);
  });

  it('on a second SIGTERM during the stop kills its redis-server and exits 1, leaving no server, pid or socket', async () => {
    const dataDir = newDataDir();
    const gateway = await startGateway({ ...embeddedEnv(dataDir), SHUTDOWN_TIMEOUT_MS: '20000' });
    await holdRequest(gateway.url); // the graceful stop would wait 20 s for it
    gateway.child.kill('SIGTERM');
    // Two signals sent before the process runs its handler are one: send the second once the stop has begun.
    expect(await eventually(() => Promise.resolve(/"msg":"stopping"/.test(gateway.output())), 10_000, 20)).toBe(true);
    gateway.child.kill('SIGTERM');
    const { code, signal } = await gateway.exited;
    expect({ code, signal }, gateway.output()).toEqual({ code: 1, signal: null });
    expect(gateway.output()).toMatch(/gateway: second signal: stopping now/);
    expect(redisServersOn(dataDir)).toEqual([]);
    expect(readdirSync(dataDir).filter((f) => ['gateway.pid', 'redis.pid', 'redis.sock'].includes(f))).toEqual([]);
  });

  it('takes an empty variable as unset (REDIS_URL= from a compose file starts the embedded Redis)', async () => {
    const gateway = await startGateway({
      ...embeddedEnv(newDataDir()),
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: '',
      KEY_PREFIX: '',
    });
    expect(gateway.output()).toMatch(/"redis":"embedded"[^\n]*"msg":"gateway listening"/);
    expect((await postGraphQL(gateway.url, SIGN_UP, { u: uniqueName('empty') })).errors).toBeUndefined();
    expect((await stopGateway(gateway)).code).toBe(0);
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

describe('a port in use', () => {
  it('stops the start in one line naming PORT=, with no stack trace', async () => {
    const busy = createServer();
    const port = await new Promise<number>((resolve) =>
      busy.listen(0, '127.0.0.1', () => resolve((busy.address() as AddressInfo).port)),
    );
    try {
      const child = spawnGateway({ ...redisEnv(), KEY_PREFIX: uniquePrefix(), PORT: String(port), LOG_LEVEL: 'warn' });
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code).toBe(1);
      expect(stderr.trim().split('\n')).toEqual([
        `gateway: port ${port} on 127.0.0.1 is in use (another gateway?): stop it, or choose a free port with PORT=`,
      ]);
    } finally {
      busy.close();
    }
  });
});
