/**
 * Each user (or anonymous address) runs at most RATE_LIMIT_PER_MINUTE operations a minute, over HTTP and WebSocket
 * alike; past it, BUSY with `retryAfter`. The quota is taken from Redis in batches (src/services/ops/limits.ts), so an
 * operation usually costs no round trip for it. An HTTP request with a document is admitted or refused as soon as its
 * parameters are read, before its document is parsed, validated or given a context: a refusal costs the gateway
 * less than an answer. A request naming a persisted query by its hash alone, and every WebSocket operation, are
 * checked when they execute (the hash's document must be found first).
 */
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { authenticate, type Authentication, type Context } from '../../context.js';
import type { AppError } from '../../errors.js';
import type { Services } from '../../services/index.js';
import { fromAppError, tagRequestId, withoutStacks } from '../errors.js';

/**
 * Told of each refusal; of one refused before parsing also the operation's name as the request gave it
 * (`operationName`) and the refusal, as no execution reports them (GET /metrics, the telemetry).
 */
export type OnRefused = (early?: { operation: string | undefined; refusal: AppError }) => void;

/** What this plugin reads and keeps on an operation's server context (gateway/yoga.ts's ServerContext extends it). */
export interface RateLimitedContext {
  address: string | undefined;
  requestId: string;
  /** HTTP: who the authorization makes the caller, when the rate limit asked before parsing. */
  authentication?: Promise<Authentication>;
  /** HTTP: whether the rate limit admitted or refused the request before parsing. */
  rateLimit?: 'admitted' | 'refused';
  /** HTTP: the rate limit's refusal before parsing (its span, plugins/tracing.ts, gives its code). */
  earlyRefusal?: AppError;
}

/** Whether an HTTP request was refused before parsing (counted as an operation, not as a bad request). */
export const wasRefusedEarly = (serverContext: object): boolean =>
  (serverContext as RateLimitedContext).rateLimit === 'refused';

export function useOperationLimits(services: Services, refused: OnRefused): Plugin<Context> {
  const limits = services.limits;
  const whoOf = (viewer: Context['viewer'], address: string | undefined) =>
    viewer ? `user:${viewer.username}` : `addr:${address ?? 'unknown'}`;

  /** At execution: WebSocket operations, and HTTP requests that named a persisted query by its hash alone. */
  const check = (args: { contextValue: unknown }, refuse: (result: { errors: GraphQLError[] }) => void) => {
    // An HTTP request admitted before parsing takes no quota again.
    if ((args.contextValue as RateLimitedContext).rateLimit === 'admitted') return;
    const { viewer, address } = args.contextValue as Context;
    const apply = (r: AppError | undefined) => {
      if (!r) return;
      refused();
      refuse({ errors: withoutStacks(() => [fromAppError(r)]) });
    };
    const refusal = withoutStacks(() => limits.operation({ who: whoOf(viewer, address) }));
    return refusal instanceof Promise ? refusal.then(apply) : void apply(refusal);
  };

  /**
   * The answer yoga gives a refusal at execution, serialized here: no GraphQL error is made, where yoga's serializer
   * copies each error into a new one (capturing a new stack) to strip internals. A result without `errors` gets
   * yoga's status 200, as a refusal at execution does. One per refusal (the limits give the same refusal while its
   * seconds to wait are the same), read only by yoga.
   */
  const answers = new WeakMap<AppError, ExecutionResult>();
  const answerOf = (r: AppError) => {
    let answer = answers.get(r);
    if (answer === undefined) {
      const body = JSON.stringify({ errors: [{ message: r.message, extensions: r.extensions }] });
      answer = { stringify: () => body } as ExecutionResult;
      answers.set(r, answer);
    }
    return answer;
  };
  /** Admits or refuses a request before parsing. Plugin-level functions: a request makes no closures here. */
  const decide = (
    server: RateLimitedContext,
    operationName: string | null | undefined,
    setResult: (result: ExecutionResult) => void,
    r: AppError | undefined,
  ) => {
    if (!r) return void (server.rateLimit = 'admitted');
    server.rateLimit = 'refused';
    server.earlyRefusal = r;
    refused({ operation: operationName ?? undefined, refusal: r });
    setResult(answerOf(r));
  };

  return {
    onParams({ params, request, context, setResult }) {
      // Over HTTP only: WebSocket operations have no parameters phase.
      const server = context as unknown as RateLimitedContext;
      if (typeof params.query !== 'string') return;
      return (server.authentication ??= authenticate(services, request.headers.get('authorization'))).then(
        ({ viewer }) => {
          const refusal = withoutStacks(() => limits.operation({ who: whoOf(viewer, server.address) }));
          return refusal instanceof Promise
            ? refusal.then((r) => decide(server, params.operationName, setResult, r))
            : decide(server, params.operationName, setResult, refusal);
        },
        (err: unknown) => {
          // The operation's context awaits the same answer and fails with its error: no quota is taken for it.
          tagRequestId(err, server.requestId);
        },
      );
    },
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}
