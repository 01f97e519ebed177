/**
 * The front-end clients users build on, set up as their docs show: Apollo Client (subscriptions over graphql-ws behind
 * `split`, the rest over HTTP; or HttpLink alone, subscriptions in Apollo's multipart protocol and `@defer` with an
 * incremental handler) and urql (`subscriptionExchange` over graphql-ws, `fetchExchange` for the rest, which reads
 * `@defer` and `@stream` parts itself).
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { getMainDefinition } from '@apollo/client/utilities';
import { Client as UrqlClient, fetchExchange, subscriptionExchange } from '@urql/core';
import { Kind, OperationTypeNode } from 'graphql';
import type { Client as WsClient } from 'graphql-ws';

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
