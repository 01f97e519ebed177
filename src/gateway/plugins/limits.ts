/**
 * Each user (or anonymous address) runs at most RATE_LIMIT_PER_MINUTE operations a minute, over HTTP and WebSocket
 * alike; past it, BUSY with `retryAfter`. The quota is taken from Redis in batches (src/services/ops/limits.ts), so an
 * operation usually costs no round trip for it.
 */
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../../context.js';
import type { AppError } from '../../errors.js';
import { fromAppError } from '../errors.js';
import type { RateLimits } from '../../services/ops/limits.js';

/** `refused` is told of each operation refused (for GET /metrics). */
export function useOperationLimits(limits: RateLimits, refused: () => void = () => undefined): Plugin<Context> {
  const check = (
    args: { contextValue: unknown },
    refuse: (result: { errors: ReturnType<typeof fromAppError>[] }) => void,
  ) => {
    const { viewer, address } = args.contextValue as Context;
    const refusal = limits.operation({ who: viewer ? `user:${viewer.username}` : `addr:${address}` });
    const apply = (r: AppError | undefined) => {
      if (!r) return;
      refused();
      refuse({ errors: [fromAppError(r)] });
    };
    return refusal instanceof Promise ? refusal.then(apply) : void apply(refusal);
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}
