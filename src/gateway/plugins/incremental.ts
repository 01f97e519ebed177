/**
 * Incremental delivery: `@defer` and `@stream` (@graphql-yoga/plugin-defer-stream, which adds the directives that
 * graphql 16 lacks and their validation rules), refused in subscriptions, and their parts' errors masked.
 *
 * Subscriptions: the executor would flatten each event's parts into the event stream, every event ending with
 * `hasNext: false`, which a client cannot tell from the end of the stream; GraphQL's working group dropped
 * incremental delivery from subscriptions (graphql-js 17 refuses it in validation), and so does this.
 *
 * Errors: yoga's masking (envelop's useMaskedErrors) reads only a result's top-level `errors`, so an unexpected error
 * in a deferred fragment or a streamed item (a Redis failure) would reach the client with its own message, no code
 * and no log line. Each part's `incremental[].errors` go through the gateway's maskError, and an error it masks is
 * logged.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import {
  OperationTypeNode,
  visit,
  type ASTVisitor,
  type GraphQLError,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { createGraphQLError, handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { Logger } from '../../logger.js';
import { maskError } from '../errors.js';

const INCREMENTAL_DIRECTIVES = new Set(['defer', 'stream']);

/** Refuses `@defer` and `@stream` in a subscription, in its own selections and in the fragments it uses. */
const NoIncrementalSubscriptions: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(operation) {
    if (operation.operation !== OperationTypeNode.SUBSCRIPTION) return;
    for (const node of [operation, ...context.getRecursivelyReferencedFragments(operation)])
      visit(node, {
        Directive(directive) {
          if (!INCREMENTAL_DIRECTIVES.has(directive.name.value)) return;
          context.reportError(
            createGraphQLError(`@${directive.name.value} is not served in subscriptions`, { nodes: directive }),
          );
        },
      });
  },
});

/** What the executor sends after the first part (graphql-tools' SubsequentIncrementalExecutionResult, loosely). */
interface IncrementalResult {
  incremental?: readonly { errors?: readonly GraphQLError[] }[];
}

export function useIncrementalDelivery(log: Logger): Plugin<Record<string, unknown>> {
  const mask = (error: GraphQLError): GraphQLError => {
    const masked = maskError(error, 'Unexpected error.') as GraphQLError;
    if (masked !== error) log.error({ err: error }, error.message);
    return masked;
  };
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(useDeferStream());
    },
    onValidate({ addValidationRule }) {
      addValidationRule(NoIncrementalSubscriptions);
    },
    onExecute() {
      return {
        onExecuteDone: (payload) =>
          handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => {
            const { incremental } = result as IncrementalResult;
            if (!incremental?.some((part) => part.errors?.length)) return;
            setResult({
              ...result,
              incremental: incremental.map((part) => (part.errors ? { ...part, errors: part.errors.map(mask) } : part)),
            } as typeof result);
          }),
      };
    },
  };
}
