/** What the high-availability tests share: an app's environment on a Sentinel group, a cut replica, an outage's end. */
import { Redis } from 'ioredis';
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
  for (const replica of replicas) replica.child.kill('SIGSTOP');
  const direct = new Redis({ port: master.port, host: '127.0.0.1' });
  try {
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
