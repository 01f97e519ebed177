/**
 * Subscription cost, latency, loss and throughput of the gateway, beside a naive poller and a push baseline measured in
 * the same run (`npm run bench:subscriptions`). How it measures, and its BENCH_* variables: docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { closeRedisClient, createRedisClient, type RedisClient } from '../src/redis/clients.js';
import { keysOf } from '../test/support/keys.js';
import { createServices, type Services } from '../src/services/index.js';
import {
  HOST,
  ROOT,
  assertAllRunning,
  cpuSeconds,
  freePort,
  httpOk,
  median,
  positiveInt,
  progress,
  runBench,
  sleep,
  spawnGateway,
  start,
  startRedis,
  stop,
  waitFor,
  type Child,
} from './support/processes.js';
import { HeapProbe, INSPECT, memoryCost, type MemoryCost } from './support/heap.js';

const SECONDS = positiveInt('BENCH_SECONDS', 10);
const ROUNDS = positiveInt('BENCH_ROUNDS', 1);
const MEMBERS = positiveInt('BENCH_MEMBERS', 10);
const IDLE_SUBSCRIBERS = positiveInt('BENCH_IDLE_SUBSCRIBERS', 10_000);
const IDLE_CONNECTIONS = positiveInt('BENCH_IDLE_CONNECTIONS', 100);
const IDLE_SETTLE_SECONDS = positiveInt('BENCH_IDLE_SETTLE_SECONDS', 5);
const NAIVE_INTERVAL_MS = positiveInt('BENCH_NAIVE_INTERVAL_MS', 100);
const LIVE_SUBSCRIBERS = positiveInt('BENCH_LIVE_SUBSCRIBERS', 1000);
const LIVE_CONNECTIONS = positiveInt('BENCH_LIVE_CONNECTIONS', 100);
/** Latency is measured at each of these send rates (messages/s), for BENCH_SECONDS each, after 2 s of warm-up. */
const RATES = (process.env.BENCH_RATES ?? '50,200').split(',').map((r) => {
  const n = Number(r);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`BENCH_RATES must be positive integers, got "${process.env.BENCH_RATES}"`);
  return n;
});
const WARMUP_SECONDS = 2;
const AWAY = positiveInt('BENCH_AWAY', 100);
const AWAY_MESSAGES = positiveInt('BENCH_AWAY_MESSAGES', 100);
const SENDERS = positiveInt('BENCH_SENDERS', 50);
const DRAIN_SECONDS = positiveInt('BENCH_DRAIN_SECONDS', 30);
const SECTIONS = new Set((process.env.BENCH_SECTIONS || '1,2,3').split(',').map((x) => x.trim()));
const FLOOR_SECONDS = 2;
const QUIET_MS = 3000;
const IDLE_AIM = 20;
const P99_AIM = 1.5;

const SUBSCRIPTION = 'subscription ($c: ID!) { messageAdded(chatId: $c) { id chatId text } }';
const SEND = 'mutation ($c: ID!, $t: String!) { sendMessage(chatId: $c, text: $t) { id } }';

/** Failures that make the figures invalid; main exits 1 when there are any. */
const failures: string[] = [];

// ---------------------------------------------------------------------------------------------------------------
// Layout: users (one socket each) in groups of MEMBERS; chat c belongs to group c % groups, all its members.

interface Layout {
  users: { name: string; token: string }[];
  chats: { id: string; members: number[] }[];
  /** The chats of each user. */
  chatsOf: number[][];
}

function shape(subscribers: number, connections: number, what: string) {
  if (subscribers % MEMBERS || connections % MEMBERS) {
    throw new Error(
      `${what}: subscribers (${subscribers}) and connections (${connections}) must be multiples of BENCH_MEMBERS (${MEMBERS})`,
    );
  }
  const chats = subscribers / MEMBERS;
  const groups = connections / MEMBERS;
  if (chats % groups)
    throw new Error(`${what}: ${chats} chats do not split evenly over ${groups} groups of ${MEMBERS} users`);
  return { chats, groups, perConnection: subscribers / connections };
}

function layoutOf(subscribers: number, connections: number, users: Layout['users'], chatIds: string[]): Layout {
  const { groups } = shape(subscribers, connections, 'layout');
  const chats = chatIds.map((id, c) => {
    const g = c % groups;
    return { id, members: Array.from({ length: MEMBERS }, (_, j) => g * MEMBERS + j) };
  });
  const chatsOf = users.map((): number[] => []);
  chats.forEach((chat, c) => chat.members.forEach((u) => chatsOf[u]!.push(c)));
  return { users, chats, chatsOf };
}

/** Runs `fn` over `items` with at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Targets

interface Target {
  name: string;
  kind: 'gateway' | 'push';
  child: Child;
  graphqlUrl: string;
  wsUrl: string;
  /** Users and chats for `subscribers` subscriptions over `connections` sockets. */
  seed(subscribers: number, connections: number): Promise<Layout>;
}

class Seeder {
  readonly keys: ReturnType<typeof keysOf>;
  private serial = 0;
  private readonly tag = randomBytes(3).toString('hex');

  constructor(
    private readonly redis: RedisClient,
    private readonly services: Services,
    prefix: string,
  ) {
    this.keys = keysOf(prefix);
  }

  /** Gateway users with sessions, and chats that each hold one first message (every subscriber replays it). */
  async seed(subscribers: number, connections: number): Promise<Layout> {
    const { chats } = shape(subscribers, connections, 'seed');
    const batch = ++this.serial;
    const users: Layout['users'] = [];
    await pool(
      Array.from({ length: connections }, (_, i) => `b${this.tag}_${batch}_${i}`),
      50,
      async (name, i) => {
        await this.services.users.createSystemUser({ username: name });
        users[i] = { name, token: await this.services.sessions.create({ username: name }) };
      },
    );
    const blank = layoutOf(
      subscribers,
      connections,
      users,
      Array.from({ length: chats }, () => ''),
    );
    const ids: string[] = [];
    await pool(blank.chats, 20, async (chat, c) => {
      const [creator, ...others] = chat.members.map((u) => users[u]!.name);
      ids[c] = await this.services.chats.createChat(creator!, { members: others, message: 'hello' });
    });
    return layoutOf(subscribers, connections, users, ids);
  }
}

let pushSerial = 0;

/** Push-baseline "users" need no tokens and its chats no seeding: they exist once someone subscribes. */
function pushLayout(subscribers: number, connections: number): Layout {
  const { chats } = shape(subscribers, connections, 'seed');
  const batch = ++pushSerial;
  const users = Array.from({ length: connections }, (_, i) => ({ name: `p${batch}_${i}`, token: '' }));
  return layoutOf(
    subscribers,
    connections,
    users,
    Array.from({ length: chats }, (_, c) => `${batch}0${c}`),
  );
}

async function sendMessage(target: Target, layout: Layout, chat: number, n: number, text: string): Promise<number> {
  const c = layout.chats[chat]!;
  const user = layout.users[c.members[n % c.members.length]!]!;
  const res = await fetch(target.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(user.token ? { authorization: `Bearer ${user.token}` } : {}) },
    body: JSON.stringify({ query: SEND, variables: { c: c.id, t: text } }),
  });
  const body = await res.text();
  const json = JSON.parse(body) as { data?: { sendMessage?: { id: number } } | null; errors?: unknown };
  const id = json.data?.sendMessage?.id;
  if (res.status !== 200 || json.errors || typeof id !== 'number')
    throw new Error(`${target.name} sendMessage: HTTP ${res.status}: ${body}`);
  return id;
}

// ---------------------------------------------------------------------------------------------------------------
// graphql-transport-ws over a raw socket: one user, many subscriptions.

interface Delivery {
  id: number;
  chatId: string;
  text: string;
}

interface Operation {
  next(message: Delivery): void;
  error(reason: string): void;
}

class Connection {
  private readonly operations = new Map<string, Operation>();
  private nextId = 0;
  private closing = false;

  private constructor(
    private readonly socket: WebSocket,
    private readonly onBroken: (reason: string) => void,
  ) {}

  /** Opens a socket and resolves after connection_ack. `onBroken` hears of any close we did not ask for. */
  static open(url: string, token: string, onBroken: (reason: string) => void): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, 'graphql-transport-ws');
      const conn = new Connection(socket, onBroken);
      let acked = false;
      socket.on('open', () =>
        socket.send(
          JSON.stringify({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} }),
        ),
      );
      socket.on('message', (data: Buffer) => {
        const msg = JSON.parse(data.toString()) as { type: string; id?: string; payload?: unknown };
        switch (msg.type) {
          case 'connection_ack':
            acked = true;
            resolve(conn);
            break;
          case 'ping':
            socket.send(JSON.stringify({ type: 'pong' }));
            break;
          case 'next': {
            const payload = msg.payload as { data?: { messageAdded?: Delivery }; errors?: unknown };
            const op = conn.operations.get(msg.id ?? '');
            if (payload.data?.messageAdded) op?.next(payload.data.messageAdded);
            else op?.error(`next without data: ${JSON.stringify(payload)}`);
            break;
          }
          case 'error':
            conn.operations.get(msg.id ?? '')?.error(`error: ${JSON.stringify(msg.payload)}`);
            break;
          case 'complete':
            conn.operations.get(msg.id ?? '')?.error('completed by the server');
            break;
        }
      });
      socket.on('error', (err) => (acked ? onBroken(`socket error: ${err.message}`) : reject(err)));
      socket.on('close', (code, reason) => {
        if (!acked) reject(new Error(`socket closed before ack: ${code} ${reason.toString()}`));
        else if (!conn.closing) onBroken(`socket closed by the server: ${code} ${reason.toString()}`);
      });
    });
  }

  subscribe(chatId: string, op: Operation): void {
    const id = String(++this.nextId);
    this.operations.set(id, op);
    this.socket.send(
      JSON.stringify({ id, type: 'subscribe', payload: { query: SUBSCRIPTION, variables: { c: chatId } } }),
    );
  }

  close(): Promise<void> {
    this.closing = true;
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close(1000);
    });
  }
}

interface Sub {
  user: number;
  chat: number;
  ids: number[];
  seen: Set<number>;
}

/** Everyone subscribed to one target for one phase, and what they received. */
class Audience {
  readonly subs: Sub[] = [];
  readonly connections = new Map<number, Connection>();
  readonly latencies: number[] = [];
  deliveries = 0;
  lastDeliveryAt = 0;
  /** Deliveries of messages whose text starts with this are timed (text: `<prefix> <n> <sent at>`). */
  timedPrefix = '\0';

  constructor(
    readonly target: Target,
    readonly layout: Layout,
  ) {}

  fail(reason: string): void {
    failures.push(`${this.target.name}: ${reason}`);
  }

  /** Connects `users` (indexes) and subscribes each to all its chats; returns the new subscriptions. */
  async connect(users: number[]): Promise<Sub[]> {
    const added: Sub[] = [];
    await pool(users, 20, async (u) => {
      const conn = await Connection.open(this.target.wsUrl, this.layout.users[u]!.token, (reason) =>
        this.fail(`user ${u}: ${reason}`),
      );
      this.connections.set(u, conn);
      for (const chat of this.layout.chatsOf[u]!) {
        const sub: Sub = { user: u, chat, ids: [], seen: new Set() };
        added.push(sub);
        this.subs.push(sub);
        conn.subscribe(this.layout.chats[chat]!.id, {
          next: (m) => this.receive(sub, m),
          error: (reason) => this.fail(`user ${u} chat ${this.layout.chats[chat]!.id}: ${reason}`),
        });
      }
    });
    return added;
  }

  private receive(sub: Sub, m: Delivery): void {
    const now = performance.now();
    if (m.chatId !== this.layout.chats[sub.chat]!.id)
      this.fail(`a message of chat ${m.chatId} on a subscription to ${this.layout.chats[sub.chat]!.id}`);
    sub.ids.push(m.id);
    sub.seen.add(m.id);
    this.deliveries++;
    this.lastDeliveryAt = now;
    if (m.text.startsWith(this.timedPrefix)) this.latencies.push(now - Number(m.text.split(' ')[2]));
  }

  /** Closes the sockets of `users` (all when omitted); their subscriptions stay in `subs` as they were. */
  async disconnect(users?: number[]): Promise<void> {
    const which = users ?? [...this.connections.keys()];
    await Promise.all(
      which.map(async (u) => {
        await this.connections.get(u)?.close();
        this.connections.delete(u);
      }),
    );
  }

  /**
   * Waits until each of `subs` has received something, sending a probe message to the chats of those still
   * waiting whenever 1.5 s pass without progress (a push subscription receives only what is sent after it).
   */
  async ready(subs: Sub[], what: string, timeoutMs = 120_000): Promise<void> {
    const started = Date.now();
    let waiting = -1;
    let progressAt = Date.now();
    let probes = 0;
    for (;;) {
      this.check();
      const missing = subs.filter((s) => s.ids.length === 0);
      if (missing.length === 0) break;
      if (Date.now() - started > timeoutMs)
        throw new Error(`${this.target.name}: ${missing.length} of ${subs.length} ${what} received nothing`);
      if (missing.length !== waiting) {
        waiting = missing.length;
        progressAt = Date.now();
      } else if (Date.now() - progressAt > 1500) {
        const chats = [...new Set(missing.map((s) => s.chat))];
        await pool(chats, 20, async (c) => void (await sendMessage(this.target, this.layout, c, probes++, 'probe')));
        progressAt = Date.now();
      }
      await sleep(100);
    }
    progress(
      `  ${this.target.name}: ${subs.length} ${what} live after ${((Date.now() - started) / 1000).toFixed(1)} s${probes ? ` (${probes} probes)` : ''}`,
    );
  }

  /**
   * Waits until every sub in `subs` has seen every id in `expected(chat)`, or QUIET_MS without a delivery, or
   * BENCH_DRAIN_SECONDS. Returns how many expected deliveries are missing.
   */
  async settle(subs: Sub[], expected: (chat: number) => number[]): Promise<number> {
    const deadline = Date.now() + DRAIN_SECONDS * 1000;
    for (;;) {
      this.check();
      let missing = 0;
      for (const s of subs) for (const id of expected(s.chat)) if (!s.seen.has(id)) missing++;
      if (missing === 0) return 0;
      const quiet = performance.now() - this.lastDeliveryAt > QUIET_MS;
      if (quiet || Date.now() > deadline) return missing;
      await sleep(200);
    }
  }

  /** Throws when a child died; socket and subscription errors are already in `failures`. */
  check(): void {
    assertAllRunning();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring

interface RedisStats {
  total: number;
  /** Calls per command name (commands run inside Lua scripts count too, as in the total). */
  calls: Map<string, number>;
}

/** One INFO for both sections, so each reading adds exactly one command to the count. */
async function redisStats(stats: Redis): Promise<RedisStats> {
  const info = (await stats.call('INFO', 'stats', 'commandstats')) as string;
  const m = /total_commands_processed:(\d+)/.exec(info);
  if (!m) throw new Error('INFO stats has no total_commands_processed');
  const calls = new Map<string, number>();
  for (const [, name, n] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(name!, Number(n));
  return { total: Number(m[1]), calls };
}

interface Usage {
  seconds: number;
  commandsPerSecond: number;
  /** CPU % (of one core) of each pid measured. */
  cpu: number[];
  /** The busiest commands, as "name n/s". */
  top: string;
}

/** Starts a meter on Redis commands and on the CPU of `pids`; the returned function reads it. */
async function meter(stats: Redis, pids: number[]): Promise<() => Promise<Usage>> {
  const before = await redisStats(stats);
  const cpu = pids.map(cpuSeconds);
  const t0 = performance.now();
  return async () => {
    const seconds = (performance.now() - t0) / 1000;
    const after = await redisStats(stats);
    const rates = [...after.calls]
      .map(([name, n]) => [name, (n - (before.calls.get(name) ?? 0) - (name === 'info' ? 1 : 0)) / seconds] as const)
      .filter(([, r]) => r > 0)
      .sort((a, b) => b[1] - a[1]);
    return {
      seconds,
      // Less the first INFO (the second one is not counted in its own reply).
      commandsPerSecond: (after.total - before.total - 1) / seconds,
      cpu: pids.map((pid, i) => ((cpuSeconds(pid) - cpu[i]!) / seconds) * 100),
      top:
        rates
          .slice(0, 8)
          .map(([name, r]) => `${name} ${Math.round(r)}/s`)
          .join(', ') || 'none',
    };
  };
}

const describe = (u: Usage, processes = ['process', 'redis']) =>
  `${Math.round(u.commandsPerSecond)} redis cmds/s (${u.top}), CPU ${u.cpu.map((c) => `${Math.round(c * 10) / 10}%`).join(' / ')} (${processes.join(' / ')})`;

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const pidOf = (c: Child) => c.proc.pid!;

// ---------------------------------------------------------------------------------------------------------------
// Section 1: idle cost

interface IdleResult {
  floor: Usage;
  naive: Usage;
  gateway: Usage;
}

async function idleCost(
  gateway: Target,
  seeder: Seeder,
  redisUrl: string,
  stats: Redis,
  redisPid: number,
): Promise<IdleResult> {
  const { perConnection } = shape(IDLE_SUBSCRIBERS, IDLE_CONNECTIONS, 'idle');
  progress(
    `idle: seeding ${IDLE_CONNECTIONS} users in ${IDLE_SUBSCRIBERS / MEMBERS} chats of ${MEMBERS} (${perConnection} chats each)`,
  );
  const layout = await seeder.seed(IDLE_SUBSCRIBERS, IDLE_CONNECTIONS);

  progress(`idle: floor (gateway with no subscribers, nothing else) for ${FLOOR_SECONDS} s`);
  await sleep(1000);
  let read = await meter(stats, [pidOf(gateway.child), redisPid]);
  await sleep(FLOOR_SECONDS * 1000);
  const floor = await read();
  progress(`  floor: ${describe(floor)}`);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-naive-'));
  let naive: Usage;
  try {
    const file = path.join(dir, 'subscribers.json');
    const positions = layout.chatsOf.flatMap((chats) =>
      chats.map((c) => ({ key: seeder.keys.chat(layout.chats[c]!.id).messages, after: 0 })),
    );
    writeFileSync(file, JSON.stringify(positions));
    progress(
      `idle: naive poller, ${positions.length} subscribers every ${NAIVE_INTERVAL_MS} ms (2 s warm-up, then ${SECONDS} s)`,
    );
    const poller = start('naive poller', process.execPath, ['--import', 'tsx', 'bench/support/naive-poller.ts'], {
      REDIS_URL: redisUrl,
      NAIVE_SUBSCRIBERS_FILE: file,
      NAIVE_INTERVAL_MS: String(NAIVE_INTERVAL_MS),
    });
    await waitFor('naive poller output', () => Promise.resolve(poller.output().includes('"ticks"')), 30_000);
    await sleep(2000);
    read = await meter(stats, [pidOf(poller), redisPid]);
    await sleep(SECONDS * 1000);
    naive = await read();
    assertAllRunning();
    await stop(poller);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  progress(`  naive: ${describe(naive)}`);

  progress(`idle: gateway, ${IDLE_SUBSCRIBERS} subscriptions over ${IDLE_CONNECTIONS} sockets`);
  const audience = new Audience(gateway, layout);
  const subs = await audience.connect(layout.users.map((_, u) => u));
  await audience.ready(subs, 'subscriptions');
  progress(`idle: settling ${IDLE_SETTLE_SECONDS} s, then measuring ${SECONDS} s`);
  await sleep(IDLE_SETTLE_SECONDS * 1000);
  read = await meter(stats, [pidOf(gateway.child), redisPid]);
  await sleep(SECONDS * 1000);
  const gw = await read();
  audience.check();
  progress(`  gateway: ${describe(gw)}`);
  await audience.disconnect();
  return { floor, naive, gateway: gw };
}

// ---------------------------------------------------------------------------------------------------------------
// Section 2: latency and loss

interface LatencyResult {
  p50: number;
  p99: number;
  /** The 99th percentile of the sendMessage round trip alone (request to response), ms. */
  sendP99: number;
  expected: number;
  lost: number;
  sendRate: number;
  /** CPU % (of one core) of the target's process during the window. */
  cpu: number;
  /** The loss check's result, when this round ran it. */
  away?: { subscribers: number; expected: number; delivered: number; complete: number };
}

/**
 * One latency round for both targets at once (paired): each message goes to both, their sends issued back to
 * back (which one first alternates), so a pause of the shared machine delays both alike. Then the loss check,
 * one target after the other.
 */
async function latency(
  targets: Target[],
  stats: Redis,
  redisPid: number,
  round: number,
  rate: number,
  lossCheck: boolean,
): Promise<{ results: LatencyResult[]; /** Redis during the window, for both targets at once. */ redis: Usage }> {
  const { perConnection } = shape(LIVE_SUBSCRIBERS, LIVE_CONNECTIONS, 'live');
  if (AWAY % perConnection || AWAY > LIVE_SUBSCRIBERS) {
    throw new Error(
      `BENCH_AWAY (${AWAY}) must be a multiple of the subscriptions per connection (${perConnection}), at most BENCH_LIVE_SUBSCRIBERS`,
    );
  }
  const audiences: Audience[] = [];
  const subs: Sub[][] = [];
  for (const target of targets) {
    const audience = new Audience(target, await target.seed(LIVE_SUBSCRIBERS, LIVE_CONNECTIONS));
    subs.push(await audience.connect(audience.layout.users.map((_, u) => u)));
    await audience.ready(subs.at(-1)!, 'subscriptions');
    audiences.push(audience);
  }
  const chatCount = audiences[0]!.layout.chats.length;
  const names = targets.map((t) => t.name).join(' and ');

  /**
   * Sends `count` messages to each target at `rate`, round robin over the chats; returns the send rate each
   * achieved (until its last response: below `rate` when it cannot keep up, its latency then being queueing).
   */
  const sendTimes = targets.map((): number[] => []);
  const paced = async (count: number, prefix: string, sent: number[][][]): Promise<number[]> => {
    const t0 = performance.now();
    const done = targets.map(() => t0);
    const inFlight = new Set<Promise<void>>();
    for (let n = 0; n < count; n++) {
      const wait = t0 + (n * 1000) / rate - performance.now();
      if (wait >= 1) await sleep(wait);
      const chat = n % chatCount;
      for (const k of n % 2 ? [...targets.keys()].reverse() : targets.keys()) {
        const audience = audiences[k]!;
        const start = performance.now();
        const p: Promise<void> = sendMessage(
          audience.target,
          audience.layout,
          chat,
          Math.floor(n / chatCount),
          `${prefix} ${n} ${start}`,
        )
          .then((id) => {
            done[k] = performance.now();
            sendTimes[k]!.push(done[k] - start);
            sent[k]![chat]!.push(id);
          })
          .catch((err: unknown) => audience.fail(`send: ${err instanceof Error ? err.message : String(err)}`))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
    }
    await Promise.all(inFlight);
    return done.map((at) => count / ((at - t0) / 1000));
  };
  const sentTo = () => targets.map(() => Array.from({ length: chatCount }, (): number[] => []));
  const settle = (sent: number[][][]) => Promise.all(audiences.map((a, k) => a.settle(subs[k]!, (c) => sent[k]![c]!)));

  // Warm-up at the same rate, not timed (JIT, script cache, connection pools), as bench/http.ts does.
  progress(`latency round ${round}: ${names}, ${WARMUP_SECONDS} s warm-up at ${rate}/s`);
  const warm = sentTo();
  await paced(WARMUP_SECONDS * rate, `w${round}`, warm);
  await settle(warm);

  const messages = SECONDS * rate;
  progress(`latency round ${round}: ${names}, ${messages} messages each at ${rate}/s to ${chatCount} chats`);
  const prefix = `m${round}`;
  for (const a of audiences) a.timedPrefix = `${prefix} `;
  const sent = sentTo();
  const read = await meter(stats, [...targets.map((t) => pidOf(t.child)), redisPid]);
  for (const times of sendTimes) times.length = 0;
  const sendRates = await paced(messages, prefix, sent);
  const lost = await settle(sent);
  const usage = await read();
  progress(`  ${describe(usage, [...targets.map((t) => t.name), 'redis'])}`);
  const results = audiences.map((audience, k): LatencyResult => {
    const expected = messages * MEMBERS;
    const result = {
      p50: percentile(audience.latencies, 50),
      p99: percentile(audience.latencies, 99),
      sendP99: percentile(sendTimes[k]!, 99),
      expected,
      lost: lost[k]!,
      sendRate: sendRates[k]!,
      cpu: usage.cpu[k]!,
    };
    progress(
      `  ${audience.target.name}: ${audience.latencies.length}/${expected} timed deliveries, p50 ${round1(result.p50)} ms, p99 ${round1(result.p99)} ms, ` +
        `answered at ${Math.round(result.sendRate)}/s (send p99 ${round1(result.sendP99)} ms)`,
    );
    if (result.lost && audience.target.kind === 'gateway')
      audience.fail(`latency run: ${result.lost} of ${expected} deliveries missing`);
    return result;
  });

  for (const [k, audience] of audiences.entries()) {
    if (lossCheck) results[k]!.away = await awayCheck(audience, perConnection);
    await audience.disconnect();
  }
  return { results, redis: usage };
}

/** Whole sockets go away, messages go to their chats, they come back with new subscriptions: what arrives. */
async function awayCheck(audience: Audience, perConnection: number): Promise<NonNullable<LatencyResult['away']>> {
  const { layout, target } = audience;
  const awayUsers = layout.users.slice(0, AWAY / perConnection).map((_, u) => u);
  const awayChats = [...new Set(awayUsers.flatMap((u) => layout.chatsOf[u]!))];
  progress(
    `  loss check, ${target.name}: ${AWAY} subscribers (${awayUsers.length} sockets) away, ${AWAY_MESSAGES} messages to their ${awayChats.length} chats`,
  );
  await audience.disconnect(awayUsers);
  await sleep(500);
  const whileAway = layout.chats.map((): number[] => []);
  for (let n = 0; n < AWAY_MESSAGES; n++) {
    const chat = awayChats[n % awayChats.length]!;
    whileAway[chat]!.push(await sendMessage(target, layout, chat, n, `away ${n}`));
  }
  await sleep(500);
  const back = await audience.connect(awayUsers);
  await audience.ready(back, 'reconnected subscriptions');
  await audience.settle(back, (c) => whileAway[c]!);
  let delivered = 0;
  let complete = 0;
  let expected = 0;
  for (const s of back) {
    const ids = whileAway[s.chat]!;
    const got = ids.filter((id) => s.seen.has(id)).length;
    expected += ids.length;
    delivered += got;
    if (got === ids.length) complete++;
  }
  progress(
    `  loss check, ${target.name}: ${delivered} of ${expected} delivered; ${complete} of ${back.length} subscribers got all`,
  );
  if (target.kind === 'gateway' && delivered !== expected)
    audience.fail(`loss check: ${expected - delivered} messages sent while away never delivered`);
  return { subscribers: back.length, expected, delivered, complete };
}

// ---------------------------------------------------------------------------------------------------------------
// Section 3: throughput

interface ThroughputResult {
  sent: number;
  messagesPerSecond: number;
  deliveriesPerSecond: number;
  drainSeconds: number;
  lost: number;
  misordered: number;
  usage: Usage;
}

async function throughput(target: Target, stats: Redis, redisPid: number, round: number): Promise<ThroughputResult> {
  const layout = await target.seed(LIVE_SUBSCRIBERS, LIVE_CONNECTIONS);
  const audience = new Audience(target, layout);
  const subs = await audience.connect(layout.users.map((_, u) => u));
  await audience.ready(subs, 'subscriptions');

  progress(`throughput round ${round}: ${target.name}, ${SENDERS} senders for ${SECONDS} s`);
  const sent = layout.chats.map((): number[] => []);
  const baseline = subs.map((s) => s.ids.length);
  const startDeliveries = audience.deliveries;
  let n = 0;
  const read = await meter(stats, [pidOf(target.child), redisPid]);
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (performance.now() < end && failures.length === 0) {
        const i = n++;
        const chat = i % layout.chats.length;
        try {
          sent[chat]!.push(await sendMessage(target, layout, chat, Math.floor(i / layout.chats.length), `x ${i}`));
        } catch (err) {
          audience.fail(`send: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }),
  );
  const sendSeconds = (performance.now() - t0) / 1000;
  const total = sent.reduce((a, ids) => a + ids.length, 0);
  const lost = await audience.settle(subs, (c) => sent[c]!);
  const usage = await read();
  const deliveries = audience.deliveries - startDeliveries;
  const deliverySeconds = (audience.lastDeliveryAt - t0) / 1000;

  // Exactly once and in order: what each subscriber got during the run is its chat's sent ids, ascending.
  let misordered = 0;
  subs.forEach((s, i) => {
    const got = s.ids.slice(baseline[i]);
    const want = [...sent[s.chat]!].sort((a, b) => a - b);
    const inOrder = got.every((id, k) => k === 0 || id > got[k - 1]!);
    if (!inOrder || got.length !== new Set(got).size) misordered++;
    else if (target.kind === 'gateway' && got.join() !== want.join()) misordered++;
  });
  const result = {
    sent: total,
    messagesPerSecond: total / sendSeconds,
    deliveriesPerSecond: deliveries / deliverySeconds,
    drainSeconds: deliverySeconds - sendSeconds,
    lost,
    misordered,
    usage,
  };
  progress(
    `  ${total} sent (${Math.round(result.messagesPerSecond)}/s), ${deliveries} deliveries (${Math.round(result.deliveriesPerSecond)}/s), ` +
      `last ${round1(result.drainSeconds)} s after sending stopped, ${lost} missing, ${misordered} subscribers out of order or duplicated`,
  );
  progress(`  ${describe(usage)}`);
  if (target.kind === 'gateway' && (lost || misordered)) {
    audience.fail(
      `throughput: ${lost} deliveries missing, ${misordered} subscribers with duplicates, gaps or disorder`,
    );
  }
  await audience.disconnect();
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Section 4: memory

const MEMORY_SUBSCRIBERS = positiveInt('BENCH_MEMORY_SUBSCRIBERS', 10_000);
const MEMORY_CONNECTIONS = positiveInt('BENCH_MEMORY_CONNECTIONS', 1000);
const SOCKET_KB_AIM = 4;
const SUBSCRIPTION_KB_AIM = 8;
const kb = (bytes: number) => round1(bytes / 1024);

/** The heap of `target` (started with INSPECT) per idle socket, then per live subscription. */
async function memory(target: Target): Promise<MemoryCost> {
  progress(`memory: ${target.name}, ${MEMORY_CONNECTIONS} idle sockets, then ${MEMORY_SUBSCRIBERS} subscriptions`);
  const probe = await HeapProbe.attach(target.child);
  const layout = await target.seed(MEMORY_SUBSCRIBERS, MEMORY_CONNECTIONS);
  const audience = new Audience(target, layout);
  const idle: Connection[] = [];
  try {
    return await memoryCost(target.name, probe, {
      sockets: MEMORY_CONNECTIONS,
      openIdle: () =>
        pool(layout.users, 20, async (user, u) => {
          idle.push(await Connection.open(target.wsUrl, user.token, (r) => audience.fail(`idle socket ${u}: ${r}`)));
        }),
      subscriptions: MEMORY_SUBSCRIBERS,
      busySockets: MEMORY_CONNECTIONS,
      subscribe: async () => audience.ready(await audience.connect(layout.users.map((_, u) => u)), 'subscriptions'),
    });
  } finally {
    await audience.disconnect();
    await Promise.all(idle.map((c) => c.close()));
    probe.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  // Check the shapes before starting anything.
  shape(IDLE_SUBSCRIBERS, IDLE_CONNECTIONS, 'BENCH_IDLE_*');
  const live = shape(LIVE_SUBSCRIBERS, LIVE_CONNECTIONS, 'BENCH_LIVE_*');
  if (AWAY % live.perConnection || AWAY > LIVE_SUBSCRIBERS) {
    throw new Error(
      `BENCH_AWAY (${AWAY}) must be a multiple of ${live.perConnection} (subscriptions per connection), at most ${LIVE_SUBSCRIBERS}`,
    );
  }

  if (SECTIONS.has('4') && !existsSync(path.join(ROOT, 'dist', 'server.js')))
    throw new Error('section 4 measures dist/server.js, which is missing: npm run build');

  const redisServer = await startRedis();
  const prefix = `bench${randomBytes(3).toString('hex')}:`;
  const [gatewayPort, pushPort] = [await freePort(), await freePort()];
  const maxPerConnection = Math.max(1000, IDLE_SUBSCRIBERS / IDLE_CONNECTIONS, live.perConnection);
  progress(`starting gateway on ${gatewayPort} and push baseline on ${pushPort}`);
  const gatewayEnv = (port: number): Record<string, string> => ({
    NODE_ENV: 'production',
    HOST,
    PORT: String(port),
    REDIS_URL: redisServer.url,
    KEY_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    WS_MAX_SUBSCRIPTIONS: String(maxPerConnection),
  });
  const startPush = (name: string, port: number, env: Record<string, string> = {}) =>
    start(name, process.execPath, ['--import', 'tsx', 'bench/support/push-baseline.ts'], {
      HOST,
      PORT: String(port),
      REDIS_URL: redisServer.url,
      ...env,
    });
  const gatewayChild = spawnGateway('gateway', gatewayEnv(gatewayPort));
  const pushChild = startPush('push baseline', pushPort);
  await waitFor('gateway /readyz', () => httpOk(`http://${HOST}:${gatewayPort}/readyz`));
  await waitFor('push baseline /health', () => httpOk(`http://${HOST}:${pushPort}/health`));

  // The gateway's environment, so that the services seed with its limits.
  const config = loadConfig({
    ...process.env,
    REDIS_URL: redisServer.url,
    REDIS_CLUSTER_NODES: '',
    KEY_PREFIX: prefix,
    LOG_LEVEL: 'silent',
  });
  if (config.redis.kind !== 'url') throw new Error('unreachable: the bench Redis is a URL');
  const log = createLogger('silent');
  const redis = createRedisClient(config.redis, log, 'bench-seed');
  const services = createServices(redis, config, log);
  const stats = new Redis(redisServer.url, { connectionName: 'bench-stats' });
  try {
    const seeder = new Seeder(redis, services, prefix);
    const gateway: Target = {
      name: 'gateway',
      kind: 'gateway',
      child: gatewayChild,
      graphqlUrl: `http://${HOST}:${gatewayPort}/graphql`,
      wsUrl: `ws://${HOST}:${gatewayPort}/graphql`,
      seed: (s, c) => seeder.seed(s, c),
    };
    const push: Target = {
      name: 'push baseline',
      kind: 'push',
      child: pushChild,
      graphqlUrl: `http://${HOST}:${pushPort}/graphql`,
      wsUrl: `ws://${HOST}:${pushPort}/graphql`,
      seed: (s, c) => Promise.resolve(pushLayout(s, c)),
    };
    const redisPid = pidOf(redisServer.child);

    const idle = SECTIONS.has('1') ? await idleCost(gateway, seeder, redisServer.url, stats, redisPid) : undefined;

    const targets = [gateway, push];
    const latRedis = RATES.map((): Usage[] => []);
    const lat = RATES.map(() => targets.map((): LatencyResult[] => []));
    const thr = targets.map((): ThroughputResult[] => []);
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? [0, 1] : [1, 0];
      if (SECTIONS.has('2')) {
        for (const [r, rate] of RATES.entries()) {
          const { results, redis } = await latency(
            order.map((i) => targets[i]!),
            stats,
            redisPid,
            round,
            rate,
            r === 0,
          );
          for (const [k, i] of order.entries()) lat[r]![i]!.push(results[k]!);
          latRedis[r]!.push(redis);
        }
      }
      if (SECTIONS.has('3')) for (const i of order) thr[i]!.push(await throughput(targets[i]!, stats, redisPid, round));
    }

    // Report.
    if (idle) {
      const ratio = idle.naive.commandsPerSecond / idle.gateway.commandsPerSecond;
      console.log(
        `\n1. Idle cost: ${IDLE_SUBSCRIBERS} idle subscribers, ${IDLE_SUBSCRIBERS / MEMBERS} chats of ${MEMBERS}, ${IDLE_CONNECTIONS} sockets; ` +
          `${SECONDS} s windows (floor ${FLOOR_SECONDS} s)`,
      );
      console.table([
        {
          what: 'floor: gateway, no subscribers',
          'redis cmds/s': Math.round(idle.floor.commandsPerSecond),
          'process CPU %': round1(idle.floor.cpu[0]!),
          'redis CPU %': round1(idle.floor.cpu[1]!),
        },
        {
          what: `naive poller (every ${NAIVE_INTERVAL_MS} ms)`,
          'redis cmds/s': Math.round(idle.naive.commandsPerSecond),
          'process CPU %': round1(idle.naive.cpu[0]!),
          'redis CPU %': round1(idle.naive.cpu[1]!),
        },
        {
          what: 'gateway (idle subscribers)',
          'redis cmds/s': Math.round(idle.gateway.commandsPerSecond),
          'process CPU %': round1(idle.gateway.cpu[0]!),
          'redis CPU %': round1(idle.gateway.cpu[1]!),
        },
      ]);
      console.log(
        `naive poller aimed at ${Math.round((IDLE_SUBSCRIBERS * 1000) / NAIVE_INTERVAL_MS)} cmds/s; ` +
          `ratio naive/gateway = ${ratio.toFixed(1)}x  (aim >= ${IDLE_AIM}x: ${ratio >= IDLE_AIM ? 'met' : 'NOT met'})`,
      );
    }

    const med = <T>(xs: T[], f: (x: T) => number) => median(xs.map(f));
    if (SECTIONS.has('2')) {
      console.log(
        `\n2. Latency: ${LIVE_SUBSCRIBERS} subscribers, ${LIVE_SUBSCRIBERS / MEMBERS} chats, ${LIVE_CONNECTIONS} sockets; ${SECONDS} s at each rate; ${ROUNDS} round(s), medians`,
      );
      console.table(
        RATES.flatMap((rate, r) =>
          targets.map((t, i) => ({
            target: t.name,
            'rate /s': rate,
            'p50 ms': round1(med(lat[r]![i]!, (x) => x.p50)),
            'p99 ms': round1(med(lat[r]![i]!, (x) => x.p99)),
            'p99 per round': lat[r]![i]!.map((x) => Math.round(x.p99)).join(' '),
            'send p99 ms': round1(med(lat[r]![i]!, (x) => x.sendP99)),
            'deliveries missing': lat[r]![i]!.map((x) => `${x.lost}/${x.expected}`).join(' '),
            'answered/s': Math.round(med(lat[r]![i]!, (x) => x.sendRate)),
            'process CPU %': round1(med(lat[r]![i]!, (x) => x.cpu)),
          })),
        ),
      );
      for (const [r, rate] of RATES.entries()) {
        console.log(
          `Redis at ${rate}/s, both targets at once: ${Math.round(med(latRedis[r]!, (u) => u.commandsPerSecond))} cmds/s, ` +
            `${round1(med(latRedis[r]!, (u) => u.cpu.at(-1)!))}% CPU`,
        );
      }
      for (const [r, rate] of RATES.entries()) {
        // Each round measured both under the same conditions: the estimate is the median of the rounds' ratios.
        const ratios = lat[r]![0]!.map((x, k) => x.p99 / lat[r]![1]![k]!.p99);
        const p99Ratio = median(ratios);
        console.log(
          `at ${rate}/s: p99 gateway/push per round ${ratios.map((x) => x.toFixed(2)).join(' ')}; median ${p99Ratio.toFixed(2)}  ` +
            `(aim <= ${P99_AIM}: ${p99Ratio <= P99_AIM ? 'met' : 'NOT met'})`,
        );
        for (const [i, t] of targets.entries()) {
          if (med(lat[r]![i]!, (x) => x.sendRate) < 0.9 * rate) {
            console.log(
              `note: ${t.name} answered fewer than 90% of ${rate}/s: it is saturated at this rate and its latency is mostly queueing`,
            );
          }
        }
      }
      console.log(
        `Loss check: ${AWAY} subscribers disconnect, ${AWAY_MESSAGES} messages to their chats, they resubscribe`,
      );
      console.table(
        targets.map((t, i) => ({
          target: t.name,
          ...Object.fromEntries(
            lat[0]![i]!.map((x, k) => [
              `round ${k + 1} delivered`,
              x.away
                ? `${x.away.delivered}/${x.away.expected} (${x.away.complete}/${x.away.subscribers} subscribers complete)`
                : '-',
            ]),
          ),
        })),
      );
    }

    if (SECTIONS.has('3')) {
      console.log(
        `\n3. Throughput: ${LIVE_SUBSCRIBERS} subscribers, ${LIVE_SUBSCRIBERS / MEMBERS} chats, ${SENDERS} senders for ${SECONDS} s; ${ROUNDS} round(s), medians`,
      );
      console.table(
        targets.map((t, i) => ({
          target: t.name,
          'messages/s': Math.round(med(thr[i]!, (r) => r.messagesPerSecond)),
          'deliveries/s': Math.round(med(thr[i]!, (r) => r.deliveriesPerSecond)),
          'drain s': round1(med(thr[i]!, (r) => r.drainSeconds)),
          'deliveries missing': thr[i]!.map((r) => `${r.lost}/${r.sent * MEMBERS}`).join(' '),
          'subs out of order': thr[i]!.map((r) => r.misordered).join(' '),
          'process CPU %': round1(med(thr[i]!, (r) => r.usage.cpu[0]!)),
          'redis CPU %': round1(med(thr[i]!, (r) => r.usage.cpu[1]!)),
          'redis cmds/s': Math.round(med(thr[i]!, (r) => r.usage.commandsPerSecond)),
        })),
      );
      const tRatio = med(thr[0]!, (r) => r.messagesPerSecond) / med(thr[1]!, (r) => r.messagesPerSecond);
      console.log(`ratio messages/s gateway/push = ${tRatio.toFixed(2)}`);
    }

    if (SECTIONS.has('4')) {
      // Fresh processes with an inspector; the gateway as `npm start` runs it (tsx's keepNames gives every named
      // function of the sources a property dictionary, a quarter of a KB, that the build does not have).
      const [heapGatewayPort, heapPushPort] = [await freePort(), await freePort()];
      const memoryTargets: Target[] = [
        {
          ...gateway,
          name: 'gateway (dist)',
          child: spawnGateway('gateway (dist)', { ...gatewayEnv(heapGatewayPort), ...INSPECT }, 'dist/server.js'),
          graphqlUrl: `http://${HOST}:${heapGatewayPort}/graphql`,
          wsUrl: `ws://${HOST}:${heapGatewayPort}/graphql`,
        },
        {
          ...push,
          child: startPush('push baseline (inspected)', heapPushPort, INSPECT),
          graphqlUrl: `http://${HOST}:${heapPushPort}/graphql`,
          wsUrl: `ws://${HOST}:${heapPushPort}/graphql`,
        },
      ];
      await waitFor('gateway (dist) /readyz', () => httpOk(`http://${HOST}:${heapGatewayPort}/readyz`));
      await waitFor('push baseline /health', () => httpOk(`http://${HOST}:${heapPushPort}/health`));
      const rows = [];
      for (const target of memoryTargets) {
        const cost = await memory(target);
        await stop(target.child);
        rows.push({
          target: target.name,
          'heap KB/socket': kb(cost.perSocket.heapUsed),
          'heap KB/subscription': kb(cost.perSubscription.heapUsed),
          'external KB/socket': kb(cost.perSocket.external),
          'external KB/subscription': kb(cost.perSubscription.external),
          'array buffers KB/socket, /subscription': `${kb(cost.perSocket.arrayBuffers)}, ${kb(cost.perSubscription.arrayBuffers)}`,
          'heap MB before': round1(cost.baseline.heapUsed / 2 ** 20),
        });
      }
      console.log(
        `\n4. Memory: ${MEMORY_CONNECTIONS} idle sockets (signed in on the gateway), then ${MEMORY_SUBSCRIBERS} live ` +
          `subscriptions over ${MEMORY_CONNECTIONS} more; after forced collections, medians of 3 readings; a subscription ` +
          `less its socket's share (1 KB = 1024 bytes)`,
      );
      console.table(rows);
      const [socketKb, subscriptionKb] = [rows[0]!['heap KB/socket'], rows[0]!['heap KB/subscription']];
      console.log(
        `gateway heap: ${socketKb} KB per idle socket (aim <= ${SOCKET_KB_AIM}: ${socketKb <= SOCKET_KB_AIM ? 'met' : 'NOT met'}), ` +
          `${subscriptionKb} KB per subscription (aim <= ${SUBSCRIPTION_KB_AIM}: ${subscriptionKb <= SUBSCRIPTION_KB_AIM ? 'met' : 'NOT met'})`,
      );
    }
  } finally {
    await services.close();
    await closeRedisClient(redis);
    stats.disconnect();
  }

  if (failures.length > 0) {
    console.log(`FAILED (${failures.length}): the figures are not valid`);
    for (const f of failures.slice(0, 20)) console.log(`  ${f}`);
    return 1;
  }
  return 0;
}

await runBench(main, () => {
  for (const f of failures.slice(0, 20)) process.stderr.write(`  ${f}\n`);
});
