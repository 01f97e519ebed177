/** The ops domain: maintenance mode, component configuration, rate limits. */
import { opsKeys } from '../../redis/ops/keys.js';
import type { Base, Domain } from '../shared/domain.js';
import { RateLimits } from './limits.js';
import { OpsService } from './ops.js';

export function createOps({ redis, space, config, log }: Base): Domain<{ ops: OpsService; limits: RateLimits }> {
  const keys = opsKeys(space);
  return {
    services: { ops: new OpsService(redis, keys), limits: new RateLimits(redis, keys, config.rateLimits, log) },
  };
}
