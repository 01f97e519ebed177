/**
 * Incremental delivery: `@defer` and `@stream` (@graphql-yoga/plugin-defer-stream, which adds the directives that
 * graphql 16 lacks and their validation rules), refused in subscriptions, a negative `initialCount` refused as bad
 * input (the executor would fail the field with an unexpected error), and their parts' errors masked.
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
  GraphQLInt,
  OperationTypeNode,
  valueFromAST,
  visit,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLError,
  type ValidationContext,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import { createGraphQLError, handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { Logger } from '../../logger.js';
import { graphQLError, maskError } from '../errors.js';

const INCREMENTAL_DIRECTIVES = new Set(['defer', 'stream']);
const OVERLAPPING = 'OverlappingFieldsCanBeMergedRule';

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

/**
 * What a parsed document holds of incremental delivery (yoga's parser cache keeps documents, so each is visited
 * once): whether it has a `@defer` or `@stream` anywhere, and the `initialCount` arguments of its `@stream`s.
 */
interface Incremental {
  directives: boolean;
  counts: ValueNode[];
}
const incrementalOf = new WeakMap<DocumentNode, Incremental>();

function incrementalIn(document: DocumentNode): Incremental {
  let found = incrementalOf.get(document);
  if (!found) {
    const seen: Incremental = { directives: false, counts: [] };
    visit(document, {
      Directive(directive) {
        if (!INCREMENTAL_DIRECTIVES.has(directive.name.value)) return;
        seen.directives = true;
        if (directive.name.value !== 'stream') return;
        const count = directive.arguments?.find((argument) => argument.name.value === 'initialCount');
        if (count) seen.counts.push(count.value);
      },
    });
    incrementalOf.set(document, (found = seen));
  }
  return found;
}

/** Whether an `initialCount` is negative, as a literal or in the request's (not yet coerced) variables. */
const negativeCount = ({ counts }: Incremental, variables: unknown) =>
  counts.some((node) => {
    const count: unknown = valueFromAST(node, GraphQLInt, variables as Record<string, unknown> | undefined);
    return typeof count === 'number' && count < 0;
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
  // Its validation rules and directives, the rules applied only to a document with `@defer` or `@stream` (they
  // check nothing else); a document without them costs this plugin one WeakMap lookup per hook.
  const { onSchemaChange, onValidate } = useDeferStream();
  return {
    onPluginInit({ addPlugin }) {
      addPlugin({ onSchemaChange });
    },
    onValidate(payload) {
      if (!incrementalIn(payload.params.documentAST as DocumentNode).directives) return;
      // The plugin's rule of overlapping fields replaces graphql's, which it removes from `params.rules`, a copy
      // envelop does not read: both would report each conflict. graphql's is the one of that name not the plugin's
      // (compared by name: vitest may load a second graphql module).
      const { validateFn } = payload;
      const own: ValidationRule[] = [];
      payload.setValidationFn(
        (schema, document, rules: readonly ValidationRule[] | undefined, ...rest) =>
          validateFn(
            schema,
            document,
            rules?.filter((rule) => rule.name !== OVERLAPPING || own.includes(rule)),
            ...rest,
          ) as readonly GraphQLError[],
      );
      onValidate!({
        ...payload,
        addValidationRule(rule: ValidationRule) {
          own.push(rule);
          payload.addValidationRule(rule);
        },
      });
      payload.addValidationRule(NoIncrementalSubscriptions);
    },
    onExecute({ args, setResultAndStopExecution }) {
      const found = incrementalIn(args.document as DocumentNode);
      if (!found.directives) return;
      if (negativeCount(found, args.variableValues)) {
        setResultAndStopExecution({ errors: [graphQLError('BAD_USER_INPUT', 'initialCount: must be 0 or more')] });
        return;
      }
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
