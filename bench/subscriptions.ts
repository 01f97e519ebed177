/**
 * Subscription cost, latency, loss and throughput of the gateway, beside a naive poller and a push baseline measured in
 * the same run (`npm run bench:subscriptions`). How it measures, and its BENCH_* variables: docs/benchmarks.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const SECTIONS = new Set((process.env.BENCH_SECTIONS || '1,2,3,5').split(',').map((x) => x.trim()));
/** Every idle window (floor, naive poller, each shape), seconds: an audit spreads its reads over POLL_AUDIT_MS. */
const IDLE_SECONDS = positiveInt('BENCH_IDLE_SECONDS', 30);
const QUIET_MS = 3000;
const IDLE_AIM = 20;
const P99_AIM = 1.2;
/** Issue 24's idle aims: at the aim's shape, and per 1,000 subscribed chats and per 10,000 sockets (from the fit). */
const IDLE_SHAPE_AIM = 150;
const CHATS_AIM = 40;
const SOCKETS_AIM = 30;
/** Redis commands per message sent (throughput run, without markRead). */
const PER_MESSAGE_AIM = 8;
/**
 * markRead: extra commands per message sent, with one delivering process (the gateway moves the read positions its
 * feeds confirmed in 100 ms as one command per chat, however many of its subscribers the chat has).
 */
const MARK_READ_AIM = 1;
/** The gateway's audit period (the engine after issue 24), for a note when the idle windows are shorter. */
const AUDIT_MS = positiveInt('POLL_AUDIT_MS', 30_000);

/**
 * An idle shape: `chats` chats of BENCH_MEMBERS members, of which the first `perChat` subscribe, over `sockets`
 * users (a socket each). Written `name=CHATSxPERCHAT@SOCKETS`.
 */
interface IdleShape {
  name: string;
  chats: number;
  perChat: number;
  sockets: number;
}

function parseShapes(raw: string): IdleShape[] {
  return raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((spec) => {
      const m = /^([a-z][a-z0-9-]*)=(\d+)x(\d+)@(\d+)$/i.exec(spec);
      const [chats, perChat, sockets] = m ? [Number(m[2]), Number(m[3]), Number(m[4])] : [0, 0, 0];
      if (!m || chats < 1 || perChat < 1 || perChat > MEMBERS || sockets < MEMBERS) {
        throw new Error(
          `BENCH_IDLE_SHAPES: "${spec}" is not name=CHATSxSUBSCRIBERS_PER_CHAT@SOCKETS with 1 <= subscribers per chat <= ` +
            `BENCH_MEMBERS (${MEMBERS}) <= sockets`,
        );
      }
      return { name: m[1]!, chats, perChat, sockets };
    });
}

const IDLE_SHAPES = parseShapes(
  process.env.BENCH_IDLE_SHAPES || 'aim=1000x10@1000,worst=1000x1@100,chats=2000x10@1000,sockets=1000x10@10000',
);
/** The shape of issue 24's aim: 10,000 subscribers over 1,000 chats of 10 on 1,000 sockets. */
const isAimShape = (s: IdleShape) => MEMBERS === 10 && s.chats === 1000 && s.perChat === 10 && s.sockets === 1000;
const subscribersOf = (s: IdleShape) => s.chats * s.perChat;

const subscription = (markRead: boolean) =>
  `subscription ($c: ID!) { messageAdded(chatId: $c${markRead ? ', markRead: true' : ''}) { id chatId text } }`;
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

/**
 * An idle shape's layout: chat c's members are users (c × perChat + j) mod sockets for j < BENCH_MEMBERS (distinct,
 * as sockets >= BENCH_MEMBERS), its first `perChat` members subscribe: the subscriptions go round robin over the users.
 */
function spreadLayout(s: IdleShape, users: Layout['users'], chatIds: string[]): Layout {
  const chats = chatIds.map((id, c) => ({
    id,
    members: Array.from({ length: MEMBERS }, (_, j) => (c * s.perChat + j) % s.sockets),
  }));
  const chatsOf = users.map((): number[] => []);
  chats.forEach((chat, c) => chat.members.slice(0, s.perChat).forEach((u) => chatsOf[u]!.push(c)));
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
  seed(subscribers: number, connections: number): Promise<Layout> {
    const { chats } = shape(subscribers, connections, 'seed');
    return this.seedLayout(connections, chats, (users, ids) => layoutOf(subscribers, connections, users, ids));
  }

  /** The same for an idle shape (spreadLayout). */
  seedShape(s: IdleShape): Promise<Layout> {
    return this.seedLayout(s.sockets, s.chats, (users, ids) => spreadLayout(s, users, ids));
  }

  private async seedLayout(
    userCount: number,
    chatCount: number,
    build: (users: Layout['users'], chatIds: string[]) => Layout,
  ): Promise<Layout> {
    const batch = ++this.serial;
    const users: Layout['users'] = [];
    const started = Date.now();
    await pool(
      Array.from({ length: userCount }, (_, i) => `b${this.tag}_${batch}_${i}`),
      50,
      async (name, i) => {
        await this.services.users.createSystemUser({ username: name });
        users[i] = { name, token: await this.services.sessions.create({ username: name }) };
      },
    );
    const blank = build(
      users,
      Array.from({ length: chatCount }, () => ''),
    );
    const ids: string[] = [];
    await pool(blank.chats, 20, async (chat, c) => {
      const [creator, ...others] = chat.members.map((u) => users[u]!.name);
      ids[c] = await this.services.chats.createChat(creator!, { members: others, message: 'hello' });
    });
    if (userCount + chatCount >= 5000)
      progress(`  seeded ${userCount} users and ${chatCount} chats in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return build(users, ids);
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

  subscribe(query: string, chatId: string, op: Operation): void {
    const id = String(++this.nextId);
    this.operations.set(id, op);
    this.socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables: { c: chatId } } }));
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
    /** Whether the subscriptions ask `markRead: true`. */
    readonly markRead = false,
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
        conn.subscribe(subscription(this.markRead), this.layout.chats[chat]!.id, {
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
  /** Redis commands over the window (less our own INFO), and per second. */
  commands: number;
  commandsPerSecond: number;
  /** Calls per command name over the window, busiest first. */
  calls: [string, number][];
  /** CPU % (of one core) of each pid measured. */
  cpu: number[];
  /** The busiest commands, as "name n/s". */
  top: string;
}

/**
 * Starts a meter on Redis commands and on the CPU of `pids`; the returned function reads it. `own` names commands
 * that this bench sent during the window (beside the INFOs), which are left out.
 */
async function meter(stats: Redis, pids: number[]): Promise<(own?: Record<string, number>) => Promise<Usage>> {
  const before = await redisStats(stats);
  const cpu = pids.map(cpuSeconds);
  const t0 = performance.now();
  return async (own = {}) => {
    const seconds = (performance.now() - t0) / 1000;
    const after = await redisStats(stats);
    // Less the first INFO (the second one is not counted in its own reply), and what the bench sent.
    const mine: Record<string, number> = { ...own, info: (own.info ?? 0) + 1 };
    const calls = [...after.calls]
      .map(([name, n]) => [name, n - (before.calls.get(name) ?? 0) - (mine[name] ?? 0)] as [string, number])
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    const commands = after.total - before.total - Object.values(mine).reduce((a, n) => a + n, 0);
    return {
      seconds,
      commands,
      commandsPerSecond: commands / seconds,
      calls,
      cpu: pids.map((pid, i) => ((cpuSeconds(pid) - cpu[i]!) / seconds) * 100),
      top: topOf(calls, seconds, 8),
    };
  };
}

/** The `n` busiest of `calls`, as "name x/s" (per `per`: seconds, or messages with unit "/msg"). */
const topOf = (calls: [string, number][], per: number, n: number, unit = '/s') =>
  calls
    .slice(0, n)
    .map(([name, c]) => `${name} ${c / per >= 10 ? Math.round(c / per) : Number((c / per).toPrecision(3))}${unit}`)
    .join(', ') || 'none';

const describe = (u: Usage, processes = ['process', 'redis']) =>
  `${Math.round(u.commandsPerSecond)} redis cmds/s (${u.top}), CPU ${u.cpu.map((c) => `${Math.round(c * 10) / 10}%`).join(' / ')} (${processes.join(' / ')})`;

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;
const pidOf = (c: Child) => c.proc.pid!;

// ---------------------------------------------------------------------------------------------------------------
// Section 1: idle cost

/** One idle measurement of the gateway (or why it was skipped), in the shape it ran. */
interface IdlePoint {
  name: string;
  subscribers: number;
  chats: number;
  sockets: number;
  usage?: Usage;
  skipped?: string;
}

interface IdleResult {
  naive: Usage;
  /** The floor, today's configuration (the naive poller's shape), then BENCH_IDLE_SHAPES. */
  points: IdlePoint[];
  /** Failures recorded during the section (they stop its aims from counting as met). */
  failures: number;
}

/** File descriptors a socket shape needs beyond its sockets (Redis connections, HTTP, files), in each process. */
const FD_MARGIN = 1000;

/** This process's open-file limits (its children inherit them); undefined when /proc does not say. */
function openFilesLimit(): { soft: number; hard: number } | undefined {
  try {
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const n = (x: string) => (x === 'unlimited' ? Infinity : Number(x));
    return m ? { soft: n(m[1]!), hard: n(m[2]!) } : undefined;
  } catch {
    return undefined;
  }
}

/** Why a shape of `sockets` sockets cannot run here (the bench and the gateway each hold one end), or undefined. */
function fdShortage(sockets: number): string | undefined {
  const limit = openFilesLimit();
  const needed = sockets + FD_MARGIN;
  if (!limit || limit.soft >= needed) return undefined;
  const raise =
    limit.hard >= needed
      ? `run \`ulimit -n ${needed}\` (or more, up to the hard limit ${limit.hard}) first`
      : `the hard limit is ${limit.hard}: raise it to at least ${needed} (as root, or in /etc/security/limits.conf), then run \`ulimit -n ${needed}\``;
  return `needs ${needed} open files per process (its sockets + ${FD_MARGIN}), ulimit -n is ${limit.soft}; Node cannot raise its own limit: ${raise}`;
}

/** Measures `pids` and Redis over one idle window of BENCH_IDLE_SECONDS, with progress every 10 s. */
async function idleWindow(stats: Redis, pids: number[], what: string): Promise<Usage> {
  const read = await meter(stats, pids);
  for (let s = 0; s < IDLE_SECONDS; s += 10) {
    await sleep(Math.min(10, IDLE_SECONDS - s) * 1000);
    assertAllRunning();
    if (s + 10 < IDLE_SECONDS) progress(`  ${what}: ${s + 10}/${IDLE_SECONDS} s`);
  }
  return read();
}

/** Subscribes every user of `layout` to all its chats, lets them settle, measures the idle window, disconnects. */
async function idleGateway(gateway: Target, layout: Layout, stats: Redis, redisPid: number, what: string) {
  const audience = new Audience(gateway, layout);
  const started = Date.now();
  const subs = await audience.connect(layout.users.map((_, u) => u));
  progress(`idle ${what}: ${layout.users.length} sockets open in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await audience.ready(subs, 'subscriptions');
  progress(`idle ${what}: settling ${IDLE_SETTLE_SECONDS} s, then measuring ${IDLE_SECONDS} s`);
  await sleep(IDLE_SETTLE_SECONDS * 1000);
  const usage = await idleWindow(stats, [pidOf(gateway.child), redisPid], what);
  audience.check();
  progress(`  ${what}: ${describe(usage)}`);
  await audience.disconnect();
  await sleep(1000); // the gateway drops the subscriptions before the next shape
  return usage;
}

async function idleCost(
  gateway: Target,
  seeder: Seeder,
  redisUrl: string,
  stats: Redis,
  redisPid: number,
): Promise<IdleResult> {
  const failuresBefore = failures.length;
  const { perConnection } = shape(IDLE_SUBSCRIBERS, IDLE_CONNECTIONS, 'idle');
  progress(
    `idle: seeding ${IDLE_CONNECTIONS} users in ${IDLE_SUBSCRIBERS / MEMBERS} chats of ${MEMBERS} (${perConnection} chats each)`,
  );
  const layout = await seeder.seed(IDLE_SUBSCRIBERS, IDLE_CONNECTIONS);
  const points: IdlePoint[] = [];

  progress(`idle: floor (gateway with no subscribers, nothing else) for ${IDLE_SECONDS} s`);
  await sleep(1000);
  const floor = await idleWindow(stats, [pidOf(gateway.child), redisPid], 'floor');
  progress(`  floor: ${describe(floor)}`);
  points.push({ name: 'floor', subscribers: 0, chats: 0, sockets: 0, usage: floor });

  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-naive-'));
  let naive: Usage;
  try {
    const file = path.join(dir, 'subscribers.json');
    const positions = layout.chatsOf.flatMap((chats) =>
      chats.map((c) => ({ key: seeder.keys.chat(layout.chats[c]!.id).messages, after: 0 })),
    );
    writeFileSync(file, JSON.stringify(positions));
    progress(
      `idle: naive poller, ${positions.length} subscribers every ${NAIVE_INTERVAL_MS} ms (2 s warm-up, then ${IDLE_SECONDS} s)`,
    );
    const poller = start('naive poller', process.execPath, ['--import', 'tsx', 'bench/support/naive-poller.ts'], {
      REDIS_URL: redisUrl,
      NAIVE_SUBSCRIBERS_FILE: file,
      NAIVE_INTERVAL_MS: String(NAIVE_INTERVAL_MS),
    });
    await waitFor('naive poller output', () => Promise.resolve(poller.output().includes('"ticks"')), 30_000);
    await sleep(2000);
    naive = await idleWindow(stats, [pidOf(poller), redisPid], 'naive poller');
    assertAllRunning();
    await stop(poller);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  progress(`  naive: ${describe(naive)}`);

  progress(`idle: gateway, today's configuration: ${IDLE_SUBSCRIBERS} subscriptions over ${IDLE_CONNECTIONS} sockets`);
  points.push({
    name: 'naive poller shape',
    subscribers: IDLE_SUBSCRIBERS,
    chats: IDLE_SUBSCRIBERS / MEMBERS,
    sockets: IDLE_CONNECTIONS,
    usage: await idleGateway(gateway, layout, stats, redisPid, 'naive poller shape'),
  });

  for (const s of IDLE_SHAPES) {
    const point: IdlePoint = { name: s.name, subscribers: subscribersOf(s), chats: s.chats, sockets: s.sockets };
    points.push(point);
    point.skipped = fdShortage(s.sockets);
    if (point.skipped) {
      progress(`idle ${s.name}: SKIPPED: ${point.skipped}`);
      continue;
    }
    progress(
      `idle ${s.name}: seeding ${s.sockets} users and ${s.chats} chats of ${MEMBERS} (${s.perChat} of each subscribe: ` +
        `${subscribersOf(s)} subscriptions, ${round1(subscribersOf(s) / s.sockets)} per socket)`,
    );
    const shapeLayout = await seeder.seedShape(s);
    point.usage = await idleGateway(gateway, shapeLayout, stats, redisPid, s.name);
  }
  return { naive, points, failures: failures.length - failuresBefore };
}

/**
 * Least squares fit of cmds/s = a + b × chats + c × sockets over the measured points (chats and sockets in
 * thousands inside, for conditioning); undefined when the points do not determine all three.
 */
function fitIdle(points: { chats: number; sockets: number; y: number }[]) {
  const xs = points.map((p) => [1, p.chats / 1000, p.sockets / 1000]);
  // Normal equations A β = v, solved by Gaussian elimination with partial pivoting.
  const A = [0, 1, 2].map((i) => [0, 1, 2].map((j) => xs.reduce((sum, x) => sum + x[i]! * x[j]!, 0)));
  const v = [0, 1, 2].map((i) => xs.reduce((sum, x, k) => sum + x[i]! * points[k]!.y, 0));
  const scale = Math.max(...A.flat().map(Math.abs));
  for (let col = 0; col < 3; col++) {
    let pivot = col;
    for (let r = col + 1; r < 3; r++) if (Math.abs(A[r]![col]!) > Math.abs(A[pivot]![col]!)) pivot = r;
    if (Math.abs(A[pivot]![col]!) < 1e-9 * scale) return undefined;
    [A[col], A[pivot]] = [A[pivot]!, A[col]!];
    [v[col], v[pivot]] = [v[pivot]!, v[col]!];
    for (let r = 0; r < 3; r++) {
      if (r === col) continue;
      const f = A[r]![col]! / A[col]![col]!;
      for (let k = col; k < 3; k++) A[r]![k]! -= f * A[col]![k]!;
      v[r]! -= f * v[col]!;
    }
  }
  const [a, b1000, c1000] = [0, 1, 2].map((i) => v[i]! / A[i]![i]!) as [number, number, number];
  const predict = (p: { chats: number; sockets: number }) => a + (b1000 * p.chats) / 1000 + (c1000 * p.sockets) / 1000;
  return { a, b: b1000 / 1000, c: c1000 / 1000, predict, residuals: points.map((p) => p.y - predict(p)) };
}

/** The idle section's tables and aims. */
function reportIdle(idle: IdleResult): void {
  const points = idle.points.filter((p) => p.usage);
  const fit = points.length >= 3 ? fitIdle(points.map((p) => ({ ...p, y: p.usage!.commandsPerSecond }))) : undefined;
  const shapeOf = (p: IdlePoint) => IDLE_SHAPES.find((s) => s.name === p.name);
  console.log(
    `\n1. Idle cost: the gateway's Redis commands/s with idle subscribers, by shape (chats of ${MEMBERS} members; ` +
      `a socket per user); ${IDLE_SECONDS} s windows after ${IDLE_SETTLE_SECONDS} s of settling, one gateway, ` +
      `disconnected between shapes`,
  );
  if (IDLE_SECONDS * 1000 < AUDIT_MS)
    console.log(
      `note: windows of ${IDLE_SECONDS} s are shorter than POLL_AUDIT_MS (${AUDIT_MS} ms): one may miss an audit`,
    );
  console.table([
    ...idle.points.map((p) => ({
      shape: p.name,
      subscribers: p.subscribers,
      chats: p.chats,
      'subscribing/chat': shapeOf(p)?.perChat ?? (p.chats ? MEMBERS : 0),
      sockets: p.sockets,
      'redis cmds/s': p.usage ? Math.round(p.usage.commandsPerSecond) : 'skipped',
      'fit cmds/s': p.usage && fit ? Math.round(fit.predict(p)) : '-',
      'process CPU %': p.usage ? round1(p.usage.cpu[0]!) : '-',
      'redis CPU %': p.usage ? round1(p.usage.cpu[1]!) : '-',
    })),
    {
      shape: `naive poller (every ${NAIVE_INTERVAL_MS} ms; not in the fit)`,
      subscribers: IDLE_SUBSCRIBERS,
      chats: IDLE_SUBSCRIBERS / MEMBERS,
      'subscribing/chat': MEMBERS,
      sockets: '-',
      'redis cmds/s': Math.round(idle.naive.commandsPerSecond),
      'fit cmds/s': '-',
      'process CPU %': round1(idle.naive.cpu[0]!),
      'redis CPU %': round1(idle.naive.cpu[1]!),
    },
  ]);
  console.log('Top commands per shape:');
  for (const p of idle.points) console.log(`  ${p.name}: ${p.usage ? p.usage.top : `skipped: ${p.skipped}`}`);
  console.log(`  naive poller: ${idle.naive.top}`);

  const failed = idle.failures ? ` (${idle.failures} failures in this section: not counted)` : '';
  const verdict = (ok: boolean) => (ok && !idle.failures ? 'met' : `NOT met${failed}`);
  const today = idle.points.find((p) => p.name === 'naive poller shape')!.usage!;
  const ratio = idle.naive.commandsPerSecond / today.commandsPerSecond;
  console.log(
    `today's configuration (${IDLE_SUBSCRIBERS} subscribers, ${IDLE_SUBSCRIBERS / MEMBERS} chats, ${IDLE_CONNECTIONS} sockets): ` +
      `naive poller aimed at ${Math.round((IDLE_SUBSCRIBERS * 1000) / NAIVE_INTERVAL_MS)} cmds/s; ` +
      `ratio naive/gateway = ${ratio.toFixed(1)}x  (aim >= ${IDLE_AIM}x: ${verdict(ratio >= IDLE_AIM)})`,
  );

  if (fit) {
    let worst = 0;
    fit.residuals.forEach((r, i) => Math.abs(r) > Math.abs(fit.residuals[worst]!) && (worst = i));
    console.log(
      `fit over ${points.length} shapes (least squares): cmds/s = ${round1(fit.a)} + ${fit.b.toPrecision(3)} × chats + ` +
        `${fit.c.toPrecision(3)} × sockets; max residual ${round1(fit.residuals[worst]!)} cmds/s (${points[worst]!.name})`,
    );
  } else {
    console.log(
      `fit: not determined (${points.length} shapes measured; they must vary chats and sockets independently, ` +
        'beside the floor)',
    );
  }
  const aim = idle.points.find((p) => shapeOf(p) && isAimShape(shapeOf(p)!) && p.usage);
  console.log(
    aim
      ? `idle at the aim's shape "${aim.name}" (10000 subscribers, 1000 chats of 10, 1000 sockets): ` +
          `${Math.round(aim.usage!.commandsPerSecond)} cmds/s  (aim <= ${IDLE_SHAPE_AIM}: ${verdict(aim.usage!.commandsPerSecond <= IDLE_SHAPE_AIM)})`
      : `idle at the aim's shape (1000x10@1000 with BENCH_MEMBERS=10): not measured in this run (no verdict)`,
  );
  if (fit) {
    // A verdict only when the measured shapes span what the aim is about (no extrapolation from small shapes).
    const shapes = points.filter((p) => p.name !== 'floor');
    const chatSpan = Math.max(...shapes.map((p) => p.chats)) - Math.min(...shapes.map((p) => p.chats));
    const maxSockets = Math.max(...shapes.map((p) => p.sockets));
    console.log(
      `1,000 more idle subscribed chats (fit b × 1000): ${round1(fit.b * 1000)} cmds/s  (aim <= ${CHATS_AIM}: ` +
        `${chatSpan >= 1000 ? verdict(fit.b * 1000 <= CHATS_AIM) : `no verdict: the shapes measured span ${chatSpan} chats, not 1,000`})`,
    );
    console.log(
      `10,000 more sockets (fit c × 10000): ${round1(fit.c * 10_000)} cmds/s  (aim <= ${SOCKETS_AIM}: ` +
        `${maxSockets >= 10_000 ? verdict(fit.c * 10_000 <= SOCKETS_AIM) : `no verdict: no shape measured had 10,000 sockets (at most ${maxSockets})`})`,
    );
  } else {
    console.log(`1,000 more chats and 10,000 more sockets: no fit, no verdict`);
  }
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
  /** Deliveries during the run. */
  deliveries: number;
  /** With markRead: subscribers whose read position did not end at the last id they received. */
  positionsWrong?: number;
  /** Redis over the run: from the first send to the last delivery (and, with markRead, its positions caught up). */
  usage: Usage;
  /** Failures recorded during the run (they stop an aim from counting as met). */
  failed: number;
}

const cmdsPerMessage = (r: ThroughputResult) => r.usage.commands / r.sent;

/** Each sub's read position in Redis (its chat's members sorted set), one ZMSCORE per chat; and the commands sent. */
async function readPositions(stats: Redis, keys: ReturnType<typeof keysOf>, audience: Audience, subs: Sub[]) {
  const byChat = new Map<number, Sub[]>();
  for (const s of subs) byChat.set(s.chat, [...(byChat.get(s.chat) ?? []), s]);
  const pipeline = stats.pipeline();
  for (const [chat, chatSubs] of byChat)
    pipeline.zmscore(
      keys.chat(audience.layout.chats[chat]!.id).members,
      ...chatSubs.map((s) => audience.layout.users[s.user]!.name),
    );
  const replies = (await pipeline.exec()) ?? [];
  const positions = new Map<Sub, number | null>();
  [...byChat.values()].forEach((chatSubs, k) => {
    const [err, scores] = replies[k]!;
    if (err) throw err;
    chatSubs.forEach((s, i) =>
      positions.set(s, (scores as (string | null)[])[i] == null ? null : Number((scores as string[])[i])),
    );
  });
  return { positions, commands: byChat.size };
}

async function throughput(
  target: Target,
  stats: Redis,
  redisPid: number,
  round: number,
  keys: ReturnType<typeof keysOf>,
  markRead = false,
): Promise<ThroughputResult> {
  const layout = await target.seed(LIVE_SUBSCRIBERS, LIVE_CONNECTIONS);
  const audience = new Audience(target, layout, markRead);
  const subs = await audience.connect(layout.users.map((_, u) => u));
  await audience.ready(subs, 'subscriptions');
  await sleep(1000); // the replay's markReads (or nothing) finish before the meter starts

  const failuresBefore = failures.length;
  const label = `${target.name}${markRead ? ', markRead: true' : ''}`;
  progress(`throughput round ${round}: ${label}, ${SENDERS} senders for ${SECONDS} s`);
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

  // With markRead, every read position must end at the last id its subscriber received (polled: the last
  // markReads follow the last deliveries); the polls' own ZMSCOREs are left out of the count.
  let positionsWrong: number | undefined;
  let own = 0;
  if (markRead) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { positions, commands } = await readPositions(stats, keys, audience, subs);
      own += commands;
      positionsWrong = subs.filter((s) => positions.get(s) !== (s.ids.at(-1) ?? null)).length;
      if (positionsWrong === 0 || Date.now() > deadline) break;
      await sleep(200);
    }
  }
  const usage = await read({ zmscore: own });
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
    deliveries,
    positionsWrong,
    usage,
    failed: 0,
  };
  progress(
    `  ${total} sent (${Math.round(result.messagesPerSecond)}/s), ${deliveries} deliveries (${Math.round(result.deliveriesPerSecond)}/s), ` +
      `last ${round1(result.drainSeconds)} s after sending stopped, ${lost} missing, ${misordered} subscribers out of order or duplicated`,
  );
  progress(`  ${describe(usage)}; ${round2(cmdsPerMessage(result))} redis commands per message sent`);
  if (positionsWrong !== undefined)
    progress(`  read positions: ${positionsWrong} of ${subs.length} subscribers not at the last id they received`);
  if (target.kind === 'gateway' && (lost || misordered)) {
    audience.fail(
      `throughput (${label}): ${lost} deliveries missing, ${misordered} subscribers with duplicates, gaps or disorder`,
    );
  }
  if (positionsWrong)
    audience.fail(`throughput (${label}): ${positionsWrong} read positions not at the last id received`);
  await audience.disconnect();
  result.failed = failures.length - failuresBefore;
  return result;
}

/** Per command, the median over `runs` of its calls ÷ messages sent: the top 12, as "name x/msg". */
function perMessageTop(runs: ThroughputResult[]): string {
  const names = [...new Set(runs.flatMap((r) => r.usage.calls.map(([name]) => name)))];
  const per = names
    .map(
      (name) =>
        [name, median(runs.map((r) => (r.usage.calls.find(([n]) => n === name)?.[1] ?? 0) / r.sent))] as [
          string,
          number,
        ],
    )
    .filter(([, x]) => x > 0)
    .sort((a, b) => b[1] - a[1]);
  return topOf(per, 1, 12, '/msg');
}

// ---------------------------------------------------------------------------------------------------------------
// Section 5: markRead

/** Section 5's report: the gateway with markRead: true beside markRead: false, paired by round. */
function reportMarkRead(marked: ThroughputResult[], unmarked: ThroughputResult[], fromSection3: boolean): void {
  const med = (xs: ThroughputResult[], f: (r: ThroughputResult) => number) => median(xs.map(f));
  const perDelivery = (r: ThroughputResult) => r.usage.commands / r.deliveries;
  console.log(
    `\n5. markRead: the throughput run of 3 on the gateway with \`messageAdded(chatId: $c, markRead: true)\`, beside ` +
      `markRead: false (${fromSection3 ? "section 3's gateway run of the same round" : 'its own run in each round, first in odd rounds'}); ` +
      `${LIVE_SUBSCRIBERS} subscribers, ${LIVE_SUBSCRIBERS / MEMBERS} chats, ${SENDERS} senders for ${SECONDS} s; ` +
      `${ROUNDS} round(s), medians`,
  );
  console.table(
    [
      ['gateway, markRead: false', unmarked],
      ['gateway, markRead: true', marked],
    ].map(([what, runs]) => {
      const rs = runs as ThroughputResult[];
      return {
        run: what as string,
        'messages/s': Math.round(med(rs, (r) => r.messagesPerSecond)),
        'deliveries/s': Math.round(med(rs, (r) => r.deliveriesPerSecond)),
        'deliveries missing': rs.map((r) => `${r.lost}/${r.sent * MEMBERS}`).join(' '),
        'subs out of order': rs.map((r) => r.misordered).join(' '),
        'read positions wrong': rs.map((r) => (r.positionsWrong === undefined ? '-' : r.positionsWrong)).join(' '),
        'process CPU %': round1(med(rs, (r) => r.usage.cpu[0]!)),
        'redis CPU %': round1(med(rs, (r) => r.usage.cpu[1]!)),
        'redis cmds/s': Math.round(med(rs, (r) => r.usage.commandsPerSecond)),
        'redis cmds/msg': round2(med(rs, cmdsPerMessage)),
        'redis cmds/delivery': round2(med(rs, perDelivery)),
      };
    }),
  );
  console.log(`Redis commands per message sent with markRead: true, top 12: ${perMessageTop(marked)}`);
  // Paired: each round's markRead: true run against the markRead: false run of the same round.
  const extra = marked.map((r, k) => cmdsPerMessage(r) - cmdsPerMessage(unmarked[k]!));
  const extraPerDelivery = marked.map((r, k) => perDelivery(r) - perDelivery(unmarked[k]!));
  const failed = [...marked, ...unmarked].reduce((a, r) => a + r.failed, 0);
  const x = median(extra);
  console.log(
    `markRead: true costs ${round2(median(extra))} more redis commands per message sent (per round: ` +
      `${extra.map(round2).join(' ')}), ${round2(median(extraPerDelivery))} more per delivered message ` +
      `(${MEMBERS} deliveries per message)`,
  );
  console.log(
    `extra commands per message sent per delivering process (1 gateway process, ${MEMBERS} subscribers per chat): ${round2(x)}  ` +
      `(aim <= ${MARK_READ_AIM}: ${x <= MARK_READ_AIM && !failed ? 'met' : `NOT met${failed ? ` (${failed} failures in these runs)` : ''}`})`,
  );
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
  const idleShapes = SECTIONS.has('1') ? IDLE_SHAPES : [];
  const maxPerConnection = Math.max(
    1000,
    IDLE_SUBSCRIBERS / IDLE_CONNECTIONS,
    live.perConnection,
    ...idleShapes.map((s) => Math.ceil(subscribersOf(s) / s.sockets)),
  );
  if (maxPerConnection > 10_000)
    throw new Error(`${maxPerConnection} subscriptions per socket: the gateway allows 10000`);
  // Every socket of the largest shape, plus HTTP connections for the senders.
  const maxConnections = Math.max(
    Number(process.env.MAX_CONNECTIONS) || 10_000,
    ...idleShapes.map((s) => s.sockets + 1000),
  );
  progress(`starting gateway on ${gatewayPort} and push baseline on ${pushPort}`);
  const gatewayEnv = (port: number): Record<string, string> => ({
    NODE_ENV: 'production',
    HOST,
    PORT: String(port),
    REDIS_URL: redisServer.url,
    KEY_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    WS_MAX_SUBSCRIPTIONS: String(maxPerConnection),
    MAX_CONNECTIONS: String(maxConnections),
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
    /** Section 5: the gateway with markRead: true, and its markRead: false baseline (section 3's when it ran). */
    const marked: ThroughputResult[] = [];
    const unmarked: ThroughputResult[] = [];
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
      if (SECTIONS.has('3'))
        for (const i of order) thr[i]!.push(await throughput(targets[i]!, stats, redisPid, round, seeder.keys));
      if (SECTIONS.has('5')) {
        // The markRead: false baseline is section 3's gateway run of this round; without section 3, one of its own
        // (first in odd rounds, second in even ones).
        const own = !SECTIONS.has('3');
        if (own && round % 2) unmarked.push(await throughput(gateway, stats, redisPid, round, seeder.keys));
        marked.push(await throughput(gateway, stats, redisPid, round, seeder.keys, true));
        if (own && !(round % 2)) unmarked.push(await throughput(gateway, stats, redisPid, round, seeder.keys));
        if (!own) unmarked.push(thr[0]!.at(-1)!);
      }
    }

    // Report.
    if (idle) reportIdle(idle);

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
          'redis cmds/msg': round2(med(thr[i]!, cmdsPerMessage)),
        })),
      );
      const tRatio = med(thr[0]!, (r) => r.messagesPerSecond) / med(thr[1]!, (r) => r.messagesPerSecond);
      console.log(`ratio messages/s gateway/push = ${tRatio.toFixed(2)}`);
      console.log(
        'Redis commands per message sent (INFO commandstats over the run, first send to last delivery, ÷ messages sent; ' +
          'scripts count with the commands they run), top 12:',
      );
      for (const [i, t] of targets.entries()) console.log(`  ${t.name}: ${perMessageTop(thr[i]!)}`);
      const floor = idle?.points[0]?.usage?.commandsPerSecond;
      console.log(
        "  (one Redis serves both: the push baseline's count includes the idle gateway's own background" +
          `${floor === undefined ? '' : ` (its floor in 1: ${Math.round(floor)} cmds/s)`}; the push baseline adds none when idle)`,
      );
      const gw = med(thr[0]!, cmdsPerMessage);
      const failed = thr[0]!.reduce((a, r) => a + r.failed, 0);
      console.log(
        `gateway: ${round2(gw)} redis commands per message without markRead, push baseline ${round2(med(thr[1]!, cmdsPerMessage))}; ` +
          `ratio gateway/push ${(gw / med(thr[1]!, cmdsPerMessage)).toFixed(2)}  (aim: gateway <= ${PER_MESSAGE_AIM}: ` +
          `${gw <= PER_MESSAGE_AIM && !failed ? 'met' : `NOT met${failed ? ` (${failed} failures in its runs)` : ''}`})`,
      );
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
      // A socket or subscription that failed makes the figures invalid (main exits 1 and lists why).
      const verdict = (met: boolean) =>
        met && failures.length === 0 ? 'met' : failures.length ? 'NOT met (failures)' : 'NOT met';
      console.log(
        `gateway heap: ${socketKb} KB per idle socket (aim <= ${SOCKET_KB_AIM}: ${verdict(socketKb <= SOCKET_KB_AIM)}), ` +
          `${subscriptionKb} KB per subscription (aim <= ${SUBSCRIPTION_KB_AIM}: ${verdict(subscriptionKb <= SUBSCRIPTION_KB_AIM)})`,
      );
    }

    if (SECTIONS.has('5')) reportMarkRead(marked, unmarked, SECTIONS.has('3'));
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
