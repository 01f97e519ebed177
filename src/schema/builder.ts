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
  };
}>({ defaultFieldNullability: false });

builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSON', JSONResolver);

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
