/** What an operation asks for below a field, to load no more than it shows. */
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether any field named one of `names` is selected anywhere below the field being resolved, through every
 * fragment and whatever the directives say (so it can only answer yes too often, never too rarely).
 */
export function selectsAny(info: GraphQLResolveInfo, names: ReadonlySet<string>): boolean {
  const within = (set: SelectionSetNode | undefined): boolean =>
    !!set &&
    set.selections.some((s) => {
      if (s.kind === Kind.FIELD) return names.has(s.name.value) || within(s.selectionSet);
      if (s.kind === Kind.INLINE_FRAGMENT) return within(s.selectionSet);
      return within(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.some((f) => within(f.selectionSet));
}
