/**
 * The front-end clients users build on, set up as their docs show: Apollo Client (subscriptions over graphql-ws behind
 * `split`, the rest over HTTP) and urql (`subscriptionExchange` over graphql-ws, `fetchExchange` for the rest).
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
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

/** urql on the gateway at `url`, its subscriptions through `ws`. */
export function urqlClient(url: string, ws: WsClient): UrqlClient {
  return new UrqlClient({
    url,
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
