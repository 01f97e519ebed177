/**
 * The Pothos schema builder: context type, scalars, the root types every domain file adds fields to, and who may
 * ask (the scope-auth plugin): a field declares `t.withAuth({ signedIn: true })` or `{ admin: true }`, and its
 * resolver gets a context whose viewer is not null. The `admin` scope asks Redis once per operation, however many
 * fields need it, so a revocation counts at the next operation. Scopes are checked when a subscription starts, over
 * WebSocket and SSE alike.
 */
import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { GraphQLError, type GraphQLResolveInfo } from 'graphql';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
import type { Context, SignedIn } from '../context.js';
import { forbidden, unauthenticated } from '../errors.js';

const ROOTS = new Set(['Query', 'Mutation', 'Subscription']);

/** The refusal of a scope: who is not signed in must sign in (again, when a token was refused); an admin is needed. */
function refusal(ctx: Context, info: GraphQLResolveInfo): Error {
  if (!ctx.viewer) return unauthenticated(ctx.rejected ?? undefined);
  return forbidden(ROOTS.has(info.parentType.name) ? 'only an admin may do this' : 'only an admin may see this field');
}

export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: { signedIn: boolean; admin: boolean };
  AuthContexts: { signedIn: SignedIn; admin: SignedIn };
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
    File: { Input: File; Output: never };
  };
}>({
  plugins: [ScopeAuthPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({
      signedIn: ctx.viewer !== null,
      admin: async () => ctx.viewer !== null && (await ctx.services.admins.isAdmin({ username: ctx.viewer.username })),
    }),
    unauthorizedError: (_parent, ctx, info) => refusal(ctx, info),
  },
});

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);
/**
 * A file part of a multipart request (the GraphQL multipart request spec), as yoga's parser gives it: a fetch API File
 * (@whatwg-node's on Node, not an instance of Node's global class), which has what no JSON value or text part has, a
 * `stream` method. Anything else, a literal included, is refused as graphql-js refuses a variable's or an argument's
 * value (BAD_USER_INPUT, naming the variable or the argument).
 */
function isFile(value: unknown): value is File {
  if (typeof value !== 'object' || value === null) return false;
  const { name, size, stream } = value as Partial<Record<keyof File, unknown>>;
  return typeof name === 'string' && typeof size === 'number' && typeof stream === 'function';
}
const notAFile = () => new GraphQLError('File is a file part of a multipart request');

builder.scalarType('File', {
  description: 'A file sent as a part of a multipart request.',
  serialize: () => {
    throw new Error('File is an input type');
  },
  parseValue: (value) => {
    if (!isFile(value)) throw notAFile();
    return value;
  },
  parseLiteral: () => {
    throw notAFile();
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
