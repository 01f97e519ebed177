/**
 * Masks the errors of `@defer` and `@stream` parts as yoga masks a result's: yoga's masking (envelop's
 * useMaskedErrors) reads only a result's top-level `errors`, so an unexpected error in a deferred fragment or a
 * streamed item (a Redis failure) would reach the client with its own message, no code, and no log line. Here each
 * part's `incremental[].errors` go through the gateway's maskError, and an error it masks is logged.
 */
import type { GraphQLError } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { Logger } from '../../logger.js';
import { maskError } from '../errors.js';

/** What the executor sends after the first part (graphql-tools' SubsequentIncrementalExecutionResult, loosely). */
interface IncrementalResult {
  incremental?: readonly { errors?: readonly GraphQLError[] }[];
}

export function useIncrementalErrorMasking(log: Logger): Plugin {
  const mask = (error: GraphQLError): GraphQLError => {
    const masked = maskError(error, 'Unexpected error.') as GraphQLError;
    if (masked !== error) log.error({ err: error }, error.message);
    return masked;
  };
  return {
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
