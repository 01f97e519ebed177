/**
 * The count of what the process's Redis clients send (src/redis/clients.ts): a fresh client's count moves by exactly
 * the commands sent through it, a pipeline or MULTI being one round trip, and GET /metrics prints it by client role.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { redisTraffic, waitUntilReady } from '../../src/redis/clients.js';
import { startTestApp, testConfig, testRedis, uniqueName } from '../support/app.js';
import { scrape } from '../support/prometheus.js';

describe('Redis traffic', () => {
  it('counts each command once and each pipeline or MULTI as one round trip, and /metrics prints it', async () => {
    const config = testConfig();
    const role = uniqueName('traffic');
    const redis = testRedis(config, createLogger('silent'), `${role}:1`);
    await waitUntilReady(redis, 10_000);
    const counts = () => ({ ...redisTraffic().get(role)! });
    const start = counts();
    // One hash tag: the pipeline and the MULTI go to one node of a cluster.
    const tag = `{${config.keyPrefix}traffic}`;
    const [a, b] = [`${tag}:a`, `${tag}:b`];

    await redis.set(a, '1');
    expect(await redis.get(a)).toBe('1');
    expect(counts()).toEqual({ commands: start.commands + 2, roundTrips: start.roundTrips + 2 });

    const piped = await redis.pipeline().get(a).incr(a).set(b, 'x').exec();
    expect(piped?.map(([err, value]) => [err, value])).toEqual([
      [null, '1'],
      [null, 2],
      [null, 'OK'],
    ]);
    expect(counts()).toEqual({ commands: start.commands + 5, roundTrips: start.roundTrips + 3 });

    // MULTI, two commands, EXEC: four commands in one write.
    const transaction = await redis.multi().get(b).del(a, b).exec();
    expect(transaction?.map(([, value]) => value)).toEqual(['x', 2]);
    expect(counts()).toEqual({ commands: start.commands + 9, roundTrips: start.roundTrips + 4 });

    // A gateway of this process prints the same figures, under the client's role.
    const t = await startTestApp();
    const metrics = await scrape(t.url.replace(/\/graphql$/, '/metrics'));
    expect(metrics.families.get('gateway_redis_commands_total')?.type).toBe('COUNTER');
    expect(metrics.value('gateway_redis_commands_total', { client: role })).toBe(start.commands + 9);
    expect(metrics.value('gateway_redis_round_trips_total', { client: role })).toBe(start.roundTrips + 4);
    // The test gateway's own client (named `test-app`) is counted too.
    expect(metrics.value('gateway_redis_commands_total', { client: 'test-app' })).toBeGreaterThan(0);
  });
});
