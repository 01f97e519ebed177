/** The ops domain: maintenance mode, component configuration, rate limits, the process's figures. */
import { redisTraffic } from '../../redis/clients.js';
import { opsCommands } from '../../redis/ops/commands.js';
import type { Base, Domain } from '../shared/domain.js';
import { GatewayFigures, redisTrafficMetrics } from './figures.js';
import { RateLimits } from './limits.js';
import { OpsService } from './ops.js';

export function createOps({ redis, space, config, log }: Base): Domain<{
  ops: OpsService;
  limits: RateLimits;
  processFigures: GatewayFigures;
}> {
  const commands = opsCommands(redis, space);
  return {
    services: {
      ops: new OpsService({ commands, log }),
      limits: new RateLimits({ commands, options: config.rateLimits, log }),
      processFigures: new GatewayFigures(),
    },
    metrics: redisTrafficMetrics(redisTraffic),
  };
}
