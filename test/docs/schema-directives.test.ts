/**
 * schema.graphql declares `@defer` and `@stream` as the gateway serves them, so a client validating its documents
 * against the file (a codegen client) accepts the incremental delivery the gateway answers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/entries.js';

const schema = buildSchema(readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8'));

describe('schema.graphql and incremental delivery', () => {
  it('validates a document using @defer and @stream', () => {
    const document = parse(`query($c: ID!) {
      chats { id ... @defer(label: "unread") { unreadCount } }
      chat(id: $c) { messages(first: 10) @stream(initialCount: 1) { id text } } }`);
    expect(validate(schema, document)).toEqual([]);
  });
});
