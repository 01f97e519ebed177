/** The Pothos schema builder: context type, scalars and the root types every domain file adds fields to. */
import SchemaBuilder from '@pothos/core';
import { DateTimeResolver, JSONResolver } from 'graphql-scalars';
import type { Context } from '../context.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
    File: { Input: File; Output: never };
  };
}>({ defaultFieldNullability: false });

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);
// yoga turns the parts of a multipart request (the GraphQL multipart request spec) into File values.
builder.scalarType('File', {
  description: 'A file sent as a part of a multipart request.',
  serialize: () => {
    throw new Error('File is an input type');
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
