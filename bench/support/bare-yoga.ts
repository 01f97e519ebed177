/**
 * Baseline for bench/http.ts: the smallest graphql-yoga server on node:http, logging off, listening on
 * HOST:PORT. It answers `{ __typename }` with no context, plugins or I/O, so it measures yoga's own cost.
 */
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { hello: String }' }),
  logging: false,
  landingPage: false,
  graphiql: false,
});

createServer((req, res) => void yoga(req, res)).listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
