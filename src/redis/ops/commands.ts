/**
 * The ops domain's door to Redis: whether Redis answers, the maintenance switch, components' configuration, and
 * the rate limiters (rate-limiter-flexible keeps its counters in Redis under the deployment's prefix).
 */
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { isReady, type RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import { opsKeys } from './keys.js';

export type OpsCommands = ReturnType<typeof opsCommands>;

export function opsCommands(redis: RedisClient, space: Keyspace) {
  const k = opsKeys(space);
  return {
    /** Whether the client is connected and Redis answers a PING within `timeoutMs`. */
    async ping(a: { timeoutMs: number }): Promise<boolean> {
      if (!isReady(redis)) return false;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), a.timeoutMs)));
      try {
        return await Promise.race([redis.ping().then((r) => r === 'PONG'), timeout]);
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },

    async maintenance(): Promise<boolean> {
      return (await redis.get(k.maintenance())) === '1';
    },

    async setMaintenance(a: { enabled: boolean }): Promise<void> {
      await (a.enabled ? redis.set(k.maintenance(), '1') : redis.del(k.maintenance()));
    },

    /** The JSON configuration of a component; null when none is set. */
    config(a: { type: string; component: string }): Promise<string | null> {
      return redis.get(k.config(a.type, a.component));
    },

    async setConfig(a: { type: string; component: string; json: string }): Promise<void> {
      await redis.set(k.config(a.type, a.component), a.json);
    },

    /** A limiter of `points` per `durationSeconds` window, its counters under the limit's `name`. */
    rateLimiter(a: { name: string; points: number; durationSeconds: number }): RateLimiterRedis {
      return new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: k.rateLimit(a.name),
        points: a.points,
        duration: a.durationSeconds,
      });
    },
  };
}
