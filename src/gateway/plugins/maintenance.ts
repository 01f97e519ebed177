/**
 * While maintenance mode is on, every mutation except the allowed ones fails with MAINTENANCE before any
 * resolver runs, so an operation is refused whole, never half-applied. Queries and subscriptions pass.
 */
import type { Plugin } from 'graphql-yoga';
import {
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Context } from '../../context.js';
import { graphQLError } from '../errors.js';

const ALLOWED = new Set(['signIn', 'setMaintenance']);

function rootFields(
  set: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  out: Set<string>,
): Set<string> {
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) out.add(s.name.value);
    else if (s.kind === Kind.INLINE_FRAGMENT) rootFields(s.selectionSet, fragments, out);
    else {
      const fragment = fragments.get(s.name.value);
      if (fragment) rootFields(fragment.selectionSet, fragments, out);
    }
  }
  return out;
}

function mutationFields(document: DocumentNode, operationName: string | null | undefined): Set<string> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const operation = document.definitions.find(
    (d) => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName),
  );
  if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation !== OperationTypeNode.MUTATION)
    return new Set();
  return rootFields(operation.selectionSet, fragments, new Set());
}

export function useMaintenanceMode(): Plugin<Context> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const fields = mutationFields(args.document as DocumentNode, args.operationName as string | null | undefined);
      const guarded = [...fields].some((f) => !ALLOWED.has(f) && !f.startsWith('__'));
      if (!guarded) return;
      const ctx = args.contextValue as Context;
      if (await ctx.services.ops.isUnderMaintenance()) {
        setResultAndStopExecution({
          errors: [
            graphQLError('MAINTENANCE', 'the gateway is in maintenance mode; writes are paused, try again later'),
          ],
        });
      }
    },
  };
}
