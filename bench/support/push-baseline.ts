/**
 * Push baseline for bench/subscriptions.ts: the textbook graphql-yoga chat, listening on HOST:PORT with
 * graphql-ws on /graphql, pub/sub through Redis (REDIS_URL) with @graphql-yoga/redis-event-target.
 * `sendMessage(chatId, text)` publishes on topic `chat:<id>` and `messageAdded(chatId)` subscribes to it: no
 * mailbox, no auth, no membership check. A message published while nobody listens is gone. Message ids
 * count per chat in this process (enough for one baseline process). GET /health answers 200.
 */
import { createServer } from 'node:http';
import { useServer } from 'graphql-ws/use/ws';
import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import type { ExecutionArgs, GraphQLSchema, parse as graphqlParse, validate as graphqlValidate } from 'graphql';

interface Message {
  id: number;
  chatId: string;
  text: string;
}

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const publishClient = new Redis(redisUrl);
const subscribeClient = new Redis(redisUrl);
const pubSub = createPubSub<{ chat: [chatId: string, message: Message] }>({
  eventTarget: createRedisEventTarget({ publishClient, subscribeClient }),
});
const lastIds = new Map<string, number>();

const yoga = createYoga({
  schema: createSchema({
    typeDefs: /* GraphQL */ `
      type Message {
        id: Int!
        chatId: ID!
        text: String!
      }
      type Query {
        hello: String
      }
      type Mutation {
        sendMessage(chatId: ID!, text: String!): Message!
      }
      type Subscription {
        messageAdded(chatId: ID!): Message!
      }
    `,
    resolvers: {
      Mutation: {
        sendMessage: (_root: unknown, { chatId, text }: { chatId: string; text: string }): Message => {
          const id = (lastIds.get(chatId) ?? 0) + 1;
          lastIds.set(chatId, id);
          const message = { id, chatId, text };
          pubSub.publish('chat', chatId, message);
          return message;
        },
      },
      Subscription: {
        messageAdded: {
          subscribe: (_root: unknown, { chatId }: { chatId: string }) => pubSub.subscribe('chat', chatId),
          resolve: (message: Message) => message,
        },
      },
    },
  }),
  logging: false,
  landingPage: false,
  graphiql: false,
});

const server = createServer((req, res) => void yoga(req, res));
const wss = new WebSocketServer({ server, path: yoga.graphqlEndpoint });

type EnvelopedArgs = ExecutionArgs & {
  rootValue: { execute: (a: ExecutionArgs) => unknown; subscribe: (a: ExecutionArgs) => unknown };
};

// The graphql-ws recipe from the graphql-yoga documentation.
useServer(
  {
    execute: (args) => (args as EnvelopedArgs).rootValue.execute(args) as never,
    subscribe: (args) => (args as EnvelopedArgs).rootValue.subscribe(args) as never,
    onSubscribe: async (ctx, _id, params) => {
      const enveloped = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, socket: ctx.extra.socket, params });
      // envelop types these loosely; they are graphql-js's functions.
      const parse = enveloped.parse as typeof graphqlParse;
      const validate = enveloped.validate as typeof graphqlValidate;
      const schema = enveloped.schema as GraphQLSchema;
      const document = parse(params.query);
      const errors = validate(schema, document);
      if (errors.length) return errors;
      return {
        schema,
        operationName: params.operationName,
        document,
        variableValues: params.variables,
        contextValue: await enveloped.contextFactory(),
        rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
      };
    },
  },
  wss,
);

server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');

const shutdown = () => {
  wss.close();
  server.close();
  publishClient.disconnect();
  subscribeClient.disconnect();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
