/**
 * Counts and times every operation the gateway serves, over HTTP and WebSocket alike, under its operation name
 * (`anonymous` without one): queries and mutations from the start of execution to its result, subscriptions
 * until their stream is set up. Recording is in memory (src/services/telemetry/metrics.ts).
 */
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../../context.js';
import type { OperationTiming } from '../../services/telemetry/metrics.js';

function operationName(document: unknown, name: unknown): string | undefined {
  return getOperationAST(document as DocumentNode, typeof name === 'string' ? name : undefined)?.name?.value;
}

/** `record` gets the operation's name as the client sent it (undefined without one) and bounds it itself. */
export function useOperationMetrics(record: (timing: OperationTiming) => void): Plugin<Context> {
  const timed = (document: unknown, name: unknown) => {
    const started = performance.now();
    return () => record({ operation: operationName(document, name), seconds: (performance.now() - started) / 1000 });
  };
  return {
    onExecute({ args }) {
      const done = timed(args.document, args.operationName);
      return { onExecuteDone: done };
    },
    onSubscribe({ args }) {
      const done = timed(args.document, args.operationName);
      return { onSubscribeResult: done };
    },
  };
}
