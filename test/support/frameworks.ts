/**
 * The front-end clients users build on, set up as their docs show: Apollo Client (subscriptions over graphql-ws behind
 * `split`, the rest over HTTP; or HttpLink alone, subscriptions in Apollo's multipart protocol and `@defer` with an
 * incremental handler) and urql (`subscriptionExchange` over graphql-ws, `fetchExchange` for the rest, which reads
 * `@defer` and `@stream` parts itself), and graphql-ws's client as README.md's "Clients" creates it for both
 * (readmeWsClient).
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { getMainDefinition } from '@apollo/client/utilities';
import { Client as UrqlClient, fetchExchange, subscriptionExchange } from '@urql/core';
import { Kind, OperationTypeNode } from 'graphql';
import { createClient, type Client as WsClient } from 'graphql-ws';

/** Apollo Client on the gateway at `url` as `token`'s user, its subscriptions through `ws`. */
export function apolloClient(url: string, ws: WsClient, token: string): ApolloClient {
  const link = ApolloLink.split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION;
    },
    new GraphQLWsLink(ws),
    new HttpLink({ uri: url, headers: { authorization: `Bearer ${token}` } }),
  );
  return new ApolloClient({ link, cache: new InMemoryCache() });
}

/**
 * Apollo Client on the gateway at `url` with HttpLink alone (no WebSocket): subscriptions over Apollo's multipart
 * HTTP protocol, `@defer` and `@stream` as the gateway's executor sends them (the 2022-08-24 incremental format).
 */
export function apolloHttpClient(url: string, token?: string): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri: url, headers: token ? { authorization: `Bearer ${token}` } : {} }),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
}

/** urql on the gateway at `url` (as `token`'s user, over HTTP, when given), its subscriptions through `ws`. */
export function urqlClient(url: string, ws: WsClient, token?: string): UrqlClient {
  return new UrqlClient({
    url,
    fetchOptions: (): RequestInit => ({ headers: token ? { authorization: `Bearer ${token}` } : {} }),
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
}

/**
 * graphql-ws's client exactly as README.md's Apollo Client and urql snippets create it, but for the URL
 * (test/ha/restart-clients.test.ts checks the README's options against these, property by property). With
 * graphql-ws's defaults a subscription ends for good when the gateway is still down at the first retry (a refused
 * connection is no close event, so not retried: graphql-ws issues #354, #356) or after 5 retries; these retry every
 * failure, for ever, with a randomised exponential backoff capped at 10 s. The subscriptions are sent again once
 * connected, and the gateway's catch-up delivers what was sent meanwhile.
 */
export function readmeWsClient(url: string, token: string): WsClient {
  return createClient({
    url,
    connectionParams: { authorization: `Bearer ${token}` },
    shouldRetry: () => true,
    retryAttempts: Infinity,
    retryWait: (retries) =>
      new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** retries, 10_000) * (0.5 + Math.random()))),
  });
}
