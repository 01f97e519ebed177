/**
 * `npm run schema` writes schema.graphql from the code; `npm run schema:check` fails when the committed
 * file differs from what the code prints.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from '../schema/index.js';

const file = new URL('../../schema.graphql', import.meta.url);
const printed = `${printSchema(schema)}\n`;

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
