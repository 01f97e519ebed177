/** What the high-availability tests share: an app's environment on a Sentinel group, a cut replica, an outage's end. */
import { Redis } from 'ioredis';
import type { MailboxCommands } from '../../src/redis/mailbox/commands.js';
import type { TestApp } from './app.js';
import { send } from './chats.js';
import type { RedisProcess, SentinelGroup } from './redis-servers.js';

/** The environment of an app on `group`'s master, found through its Sentinels. */
export const sentinelEnv = (group: SentinelGroup, env: Record<string, string> = {}) => ({
  REDIS_URL: '',
  REDIS_CLUSTER_NODES: '',
  REDIS_SENTINELS: group.sentinels,
  REDIS_SENTINEL_NAME: group.name,
  ...env,
});

/**
 * Cuts `replicas` off `master` the way a network would: the master drops the replication links and the replicas,
 * stopped, cannot come back for what is written meanwhile until the returned function lets them run again. (On one
 * machine a plain SIGKILL of the master loses nothing: a replica's socket already holds every write.)
 */
export async function cutReplicas(master: RedisProcess, replicas: RedisProcess[]): Promise<() => void> {
  const direct = new Redis({ port: master.port, host: '127.0.0.1' });
  try {
    // A replica cut off just before (the test before) takes up to a second or so to link again: wait for every link.
    const deadline = Date.now() + 20_000;
    const online = async () => ((await direct.info('replication')).match(/^slave\d+:.*state=online/gm) ?? []).length;
    while ((await online()) < replicas.length) {
      if (Date.now() > deadline)
        throw new Error(`the master has ${await online()} replicas online, not ${replicas.length}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const replica of replicas) replica.child.kill('SIGSTOP');
    const cut = Number(await direct.call('CLIENT', 'KILL', 'TYPE', 'replica'));
    if (cut !== replicas.length)
      throw new Error(`CLIENT KILL TYPE replica closed ${cut} links, not ${replicas.length}`);
  } finally {
    direct.disconnect();
  }
  return () => replicas.forEach((replica) => replica.child.kill('SIGCONT'));
}

/** Calls `attempt` until it settles without an error (while a failover has no master), for at most `timeoutMs`. */
export async function afterOutage<T>(attempt: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`still failing ${timeoutMs} ms into the outage`, { cause: err });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Sends `count` messages to `chatId` at once while the replicas are cut off, and lets them run again (`resume`) half a
 * second later: how many sends had been acknowledged by then, and the ids of all once they are.
 */
export async function sendWhileCut(
  t: TestApp,
  a: { token: string; chatId: string; resume: () => void; count?: number },
): Promise<{ early: number; ids: number[] }> {
  let acknowledged = 0;
  const sending = Promise.all(
    Array.from({ length: a.count ?? 10 }, async (_, i) => {
      const id = await send(t, a.token, a.chatId, `m${i}`);
      acknowledged++;
      return id;
    }),
  );
  await new Promise((r) => setTimeout(r, 500));
  const early = acknowledged;
  a.resume();
  return { early, ids: await sending };
}

/**
 * Counts the renewals of `t`'s doorbell connection (each makes the poller read every watched head, at once and a
 * second later: see Poller.resync). `settled` resolves once none came for `quietMs`, and fails after `timeoutMs`.
 */
export function trackRenewals(t: TestApp) {
  const { doorbells } = (t.app.services.poller as unknown as { commands: MailboxCommands }).commands;
  // As if renewed now: a renewal before this call may still have its second read to come.
  const renewals = { count: 0, last: Date.now() };
  doorbells.onReconnect(() => {
    renewals.count++;
    renewals.last = Date.now();
  });
  return {
    get count() {
      return renewals.count;
    },
    async settled({ quietMs = 2000, timeoutMs = 30_000 } = {}): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() - renewals.last < quietMs) {
        if (Date.now() > deadline) throw new Error(`the doorbells were still being renewed after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
