/**
 * `npm run schema` writes schema.graphql from the code; `npm run schema:check` fails when the committed
 * file differs from what the code prints.
 *
 * The schema printed is the one the gateway serves: the built schema as the gateway's incremental-delivery plugin
 * (src/gateway/plugins/incremental.ts) leaves it, with the `@defer` and `@stream` directives it adds at runtime
 * (graphql 16 lacks them), so a client validating its documents against schema.graphql accepts them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { printSchema, type GraphQLSchema } from 'graphql';
import { envelop, useSchema } from 'graphql-yoga';
import { useIncrementalDelivery } from '../gateway/plugins/incremental.js';
import { createLogger } from '../logger.js';
import { schema } from '../schema/index.js';

const served = envelop({ plugins: [useSchema(schema), useIncrementalDelivery(createLogger('silent'))] })()
  .schema as GraphQLSchema;
const file = new URL('../../schema.graphql', import.meta.url);
const printed = `${printSchema(served)}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // a missing file differs
  }
  if (committed !== printed) {
    console.error('schema.graphql is out of date with the code: run `npm run schema` and commit the result');
    process.exit(1);
  }
  console.log('schema.graphql matches the code');
} else {
  writeFileSync(file, printed);
  console.log(`wrote ${file.pathname}`);
}
