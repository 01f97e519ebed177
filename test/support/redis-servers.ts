/**
 * Starts real redis-server processes for tests: a standalone server, a three-master cluster joined with
 * `redis-cli --cluster create` (with a replica per master for the failover tests), or a master, its replica and
 * three Sentinels. Nothing mocks Redis. Data lives in a temporary directory removed on stop.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';

const run = promisify(execFile);

export type TestRedis = { kind: 'standalone'; url: string } | { kind: 'cluster'; nodes: string[] };

export interface RunningRedis {
  target: TestRedis;
  /** The ports of the server(s), for tests that stop and start one of them. */
  ports: number[];
  stop(): Promise<void>;
}

async function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A free loopback port whose cluster-bus companion (port + 10000) is free too. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    if ((await isFree(port)) && (await isFree(port + 10000))) return port;
  }
}

export interface RedisProcess {
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A redis-server on `port`; `first` goes before the options (a configuration file, and `--sentinel` for a Sentinel). */
export async function startRedisProcess(
  dir: string,
  port: number,
  extra: string[] = [],
  first: string[] = [],
): Promise<RedisProcess> {
  const child = spawn(
    'redis-server',
    [
      ...first,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      ...(first.includes('--sentinel') ? [] : ['--dir', dir, '--save', '', '--appendonly', 'no']),
      ...extra,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  probe.on('error', () => undefined); // refused connections are expected until the server listens
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`redis-server on port ${port} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    port,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

export async function startStandalone(): Promise<RunningRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-test-redis-'));
  const server = await startRedisProcess(dir, await freePort());
  return {
    target: { kind: 'standalone', url: `redis://127.0.0.1:${server.port}` },
    ports: [server.port],
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ClusterOptions {
  /**
   * Replicas per master: 0 (the default, the cluster every test file runs on) or 1, six servers, ready only once every
   * replica has synced with its master.
   */
  replicas?: 0 | 1;
  /** cluster-node-timeout: how long a node may not answer before it counts as failing (default 2000). */
  nodeTimeoutMs?: number;
}

/** Where a key lives: its slot, the master that serves it now and that master's replicas. */
export interface Shard {
  slot: number;
  master: RedisProcess;
  replicas: RedisProcess[];
}

export interface RunningCluster extends RunningRedis {
  target: Extract<TestRedis, { kind: 'cluster' }>;
  /** Every server, masters and replicas, in the order started (which is master is the cluster's business: `shardOf`). */
  servers: RedisProcess[];
  /** The server on `port`. */
  server(port: number): RedisProcess;
  /** The master of `key`'s slot and its replicas, as the first server that answers (not killed or stopped) says now. */
  shardOf(key: string): Promise<Shard>;
}

/** A connection to one server of a test cluster that gives up quickly (the server may be stopped or dead). */
function probe(port: number): Redis {
  const c = new Redis({
    port,
    host: '127.0.0.1',
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
  });
  c.on('error', () => undefined);
  return c;
}

/**
 * Three masters joined with `redis-cli --cluster create`, and with `replicas: 1` a replica for each (six servers).
 * Ready once every node says `cluster_state:ok` (with replicas: knows every node, and every replica's link to its
 * master is up).
 */
export async function startCluster({
  replicas = 0,
  nodeTimeoutMs = 2000,
}: ClusterOptions = {}): Promise<RunningCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-test-cluster-'));
  const servers: RedisProcess[] = [];
  for (let i = 0; i < 3 * (1 + replicas); i++) {
    const port = await freePort();
    const nodeDir = path.join(dir, String(port));
    await run('mkdir', ['-p', nodeDir]);
    servers.push(
      await startRedisProcess(nodeDir, port, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        // A replica's first sync starts at once, not after the default 5 s wait for more replicas.
        ...(replicas > 0 ? ['--repl-diskless-sync-delay', '0'] : []),
      ]),
    );
  }
  const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
  await run('redis-cli', [
    '--cluster',
    'create',
    ...addresses,
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ]);
  // Wait until every node agrees the cluster is up.
  const deadline = Date.now() + 20_000;
  for (const s of servers)
    await untilServer(s.port, deadline, 'cluster did not reach cluster_state:ok', async (c) =>
      (await c.cluster('INFO')).includes('cluster_state:ok'),
    );
  // With replicas: every node knows all the others, and every replica has synced (its master's writes reach it).
  while (replicas > 0) {
    const synced = await Promise.all(
      servers.map(async (s) => {
        const c = new Redis({ port: s.port, host: '127.0.0.1' });
        try {
          const known = (await c.cluster('INFO')).includes(`cluster_known_nodes:${servers.length}\r\n`);
          const replication = await c.info('replication');
          return {
            known,
            replica: replication.includes('role:slave'),
            up: replication.includes('master_link_status:up'),
          };
        } finally {
          c.disconnect();
        }
      }),
    );
    const replicasUp = synced.filter((n) => n.replica && n.up).length;
    if (synced.every((n) => n.known) && replicasUp === 3 * replicas) break;
    if (Date.now() > deadline) throw new Error("the cluster's replicas did not sync");
    await new Promise((r) => setTimeout(r, 100));
  }
  const byPort = new Map(servers.map((s) => [s.port, s]));
  const server = (port: number) => {
    const found = byPort.get(port);
    if (!found) throw new Error(`no server of this cluster on port ${port}`);
    return found;
  };
  return {
    target: { kind: 'cluster', nodes: addresses },
    ports: servers.map((s) => s.port),
    servers,
    server,
    async shardOf(key) {
      // Every live node is asked, and the owner with the highest config epoch wins (as in the cluster itself): a node
      // that has not yet heard of a failover still names the dead master.
      const slot = calculateSlot(key);
      let best: { epoch: number; shard: Shard } | undefined;
      for (const s of servers) {
        if (s.child.exitCode !== null || s.child.signalCode !== null) continue;
        const c = probe(s.port);
        let nodes: string;
        try {
          nodes = (await c.cluster('NODES')) as string;
        } catch {
          continue; // stopped, or not answering yet
        } finally {
          c.disconnect();
        }
        // <id> <ip:port@cport> <flags> <master id or -> <ping> <pong> <epoch> <link> <slot ranges...>
        const lines = nodes
          .trim()
          .split('\n')
          .map((line) => line.trim().split(' '));
        const portOf = (fields: string[]) => Number(/:(\d+)@/.exec(fields[1]!)![1]);
        const owner = lines.find(
          ([, , flags, , , , , , ...ranges]) =>
            flags!.split(',').includes('master') &&
            ranges.some((range) => {
              if (range.startsWith('[')) return false; // a slot being migrated
              const [from, to = from] = range.split('-').map(Number);
              return slot >= from! && slot <= to!;
            }),
        );
        if (!owner) continue; // this node names no owner yet
        const epoch = Number(owner[6]);
        if (best && best.epoch >= epoch) continue;
        best = {
          epoch,
          shard: {
            slot,
            master: server(portOf(owner)),
            replicas: lines.filter((fields) => fields[3] === owner[0]).map((fields) => server(portOf(fields))),
          },
        };
      }
      if (!best) throw new Error(`no server of the cluster named a master of slot ${slot}`);
      return best.shard;
    },
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SentinelGroup {
  /** The REDIS_SENTINELS of the group (three Sentinels). */
  sentinels: string;
  name: string;
  /** The servers: the first starts as master, the others as its replicas. */
  servers: RedisProcess[];
  stop(): Promise<void>;
}

/**
 * A master, `replicas` replicas and three Sentinels watching them (quorum 2), from the same redis-server binary, with a
 * failover about a second after the master stops answering.
 */
export async function startSentinelGroup({ name = 'mymaster', replicas = 1 } = {}): Promise<SentinelGroup> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-test-sentinel-'));
  const master = await startRedisProcess(dir, await freePort());
  const copies: RedisProcess[] = [];
  for (let i = 0; i < replicas; i++) {
    const replicaDir = path.join(dir, `replica-${i}`);
    await run('mkdir', ['-p', replicaDir]);
    copies.push(
      await startRedisProcess(replicaDir, await freePort(), ['--replicaof', '127.0.0.1', String(master.port)]),
    );
  }
  const sentinels: RedisProcess[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const conf = path.join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        '',
      ].join('\n'),
    );
    sentinels.push(await startRedisProcess(dir, port, [], [conf, '--sentinel']));
  }
  // Ready once every replica has synced and every Sentinel knows the replicas and the other Sentinels.
  const deadline = Date.now() + 30_000;
  for (const replica of copies)
    await untilServer(replica.port, deadline, 'a replica did not sync', async (c) =>
      (await c.info('replication')).includes('master_link_status:up'),
    );
  for (const s of sentinels)
    await untilServer(s.port, deadline, 'the Sentinels did not find each other and the replicas', async (c) => {
      const others = (await c.call('SENTINEL', 'SENTINELS', name)) as unknown[];
      const known = (await c.call('SENTINEL', 'REPLICAS', name)) as unknown[];
      return others.length === 2 && known.length === replicas;
    });
  return {
    sentinels: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    name,
    servers: [master, ...copies],
    async stop() {
      await Promise.all([...sentinels, master, ...copies].map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Sentinel groups started together (each waits some 5 s, mostly idle, for its Sentinels to find each other and its
 * replicas), one per element of `options`; if one fails to start, those that started are stopped.
 */
export async function startSentinelGroups(
  options: Parameters<typeof startSentinelGroup>[0][],
): Promise<SentinelGroup[]> {
  const started = await Promise.allSettled(options.map((o) => startSentinelGroup(o)));
  const failed = started.find((r) => r.status === 'rejected');
  const groups = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (!failed) return groups;
  await Promise.all(groups.map((g) => g.stop()));
  throw failed.reason;
}

/** Asks the server on `port` every 100 ms until `ready` says yes; fails with `what` past `deadline`. */
async function untilServer(
  port: number,
  deadline: number,
  what: string,
  ready: (c: Redis) => Promise<boolean>,
): Promise<void> {
  const c = new Redis({ port, host: '127.0.0.1' });
  try {
    while (!(await ready(c))) {
      if (Date.now() > deadline) throw new Error(what);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    c.disconnect();
  }
}
