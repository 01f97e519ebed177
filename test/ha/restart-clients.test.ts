/**
 * Clients that survive a restart as README.md shows them: a gateway process stops under a live Apollo Client and urql
 * subscription, stays down while their graphql-ws clients retry (past graphql-ws's defaults, which give up when the
 * first retry finds it down), and starts again on the same port; both subscriptions resume and deliver what another
 * gateway accepted while it was down (the catch-up), then new messages. The clients are test/support/frameworks.ts',
 * whose graphql-ws options are checked here against the README's snippets, property by property.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gql } from '@apollo/client';
import type { Client as WsClient } from 'graphql-ws';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { LIMITS_OFF } from '../support/limits.js';
import { postGraphQL, redisEnv, signUp, startTestApp, uniquePrefix } from '../support/app.js';
import { CREATE_CHAT, SEND } from '../support/chats.js';
import { ROOT } from '../support/entries.js';
import { apolloClient, readmeWsClient, urqlClient } from '../support/frameworks.js';
import { startGateway, stopGateway } from '../support/gateway-process.js';
import { freePort } from '../support/redis-servers.js';

/** The properties of every `createClient(...)` / `createWsClient(...)` options object in `source`, as text. */
function wsClientOptions(source: string): Record<string, string>[] {
  const found: Record<string, string>[] = [];
  const file = ts.createSourceFile('snippet.ts', source, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      /^create(Ws)?Client$/.test(node.expression.getText(file)) &&
      node.arguments[0] &&
      ts.isObjectLiteralExpression(node.arguments[0])
    ) {
      found.push(
        Object.fromEntries(
          node.arguments[0].properties.map((p) => [
            p.name?.getText(file) ?? '',
            (ts.isPropertyAssignment(p) ? p.initializer.getText(file) : p.getText(file)).replace(/\s+/g, ' '),
          ]),
        ),
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("README's clients", () => {
  it('create their graphql-ws client with the options test/support/frameworks.ts uses', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const clients = /^\*\*Clients\.\*\*([\s\S]*?)^\*\*Persisted queries\.\*\*/m.exec(readme)?.[1] ?? '';
    // The snippets over graphql-ws (the others subscribe over HTTP: Apollo's multipart, graphql-sse).
    const snippets = [...clients.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map(([, code]) => code!)
      .filter((code) => code.includes("from 'graphql-ws'"));
    expect(snippets).toHaveLength(2); // Apollo Client, urql
    const framework = wsClientOptions(readFileSync(path.join(ROOT, 'test/support/frameworks.ts'), 'utf8'));
    expect(framework).toHaveLength(1);
    const expected = { ...framework[0] };
    delete expected.url;
    expect(Object.keys(expected)).toEqual(
      expect.arrayContaining(['connectionParams', 'shouldRetry', 'retryAttempts', 'retryWait']),
    );
    for (const snippet of snippets) {
      const [options, ...more] = wsClientOptions(snippet);
      expect(more).toEqual([]);
      const { url, ...rest } = options!;
      expect(url).toBe("'ws://localhost:4000/graphql'");
      expect(rest).toEqual(expected);
    }
  });
});

describe('a gateway restart under live Apollo Client and urql subscriptions', () => {
  it('resumes both, delivering what was sent while the gateway was down', { timeout: 120_000 }, async () => {
    const env = {
      ...redisEnv(),
      ...LIMITS_OFF,
      KEY_PREFIX: uniquePrefix(),
      WORKER: 'off',
      PORT: `${await freePort()}`,
    };
    let gateway = await startGateway(env);
    const url = gateway.url;
    const wsUrl = url.replace(/^http/, 'ws');
    const [ann, bob, cat] = await Promise.all([signUp(url), signUp(url), signUp(url)]);
    const created = await postGraphQL<{ createChat: { id: string } }>(
      url,
      CREATE_CHAT,
      { m: [bob.username, cat.username], t: 'before' },
      ann.token,
    );
    const chatId = created.data!.createChat.id;

    // Bob on Apollo Client, Cat on urql, each with graphql-ws as the README creates it; repeats (unread messages
    // delivered again after resubscribing) are removed by id, as API.md tells clients to.
    const MESSAGES = 'subscription Messages($c: ID) { messageAdded(chatId: $c) { id text } }';
    type Added = { messageAdded: { id: number; text: string } };
    const received = { apollo: new Map<number, string>(), urql: new Map<number, string>() };
    const errors: unknown[] = [];
    const apolloWs = readmeWsClient(wsUrl, bob.token);
    const urqlWs = readmeWsClient(wsUrl, cat.token);
    const apollo = apolloClient(url, apolloWs, bob.token);
    const urql = urqlClient(url, urqlWs);
    const apolloSub = apollo.subscribe<Added>({ query: gql(MESSAGES), variables: { c: chatId } }).subscribe({
      next: (r) => r.data && received.apollo.set(r.data.messageAdded.id, r.data.messageAdded.text),
      error: (err) => errors.push(err),
    });
    const urqlSub = urql.subscription<Added>(MESSAGES, { c: chatId }).subscribe((r) => {
      if (r.error) errors.push(r.error);
      if (r.data) received.urql.set(r.data.messageAdded.id, r.data.messageAdded.text);
    });
    const attempts = (ws: WsClient) => {
      const counter = { n: 0 };
      ws.on('connecting', () => counter.n++);
      return counter;
    };
    const tries = { apollo: attempts(apolloWs), urql: attempts(urqlWs) };
    const texts = (client: 'apollo' | 'urql') =>
      [...received[client].entries()].sort(([a], [b]) => a - b).map(([, t]) => t);
    const poll = { timeout: 60_000, interval: 50 };

    try {
      await expect.poll(() => [texts('apollo'), texts('urql')], poll).toEqual([['before'], ['before']]);

      expect((await stopGateway(gateway)).code).toBe(0);
      const down = { apollo: tries.apollo.n, urql: tries.urql.n };
      // Meanwhile another gateway (in this process, same Redis and key prefix) takes Ann's messages.
      const other = await startTestApp({ KEY_PREFIX: env.KEY_PREFIX });
      for (const text of ['while down 1', 'while down 2'])
        expect((await other.gql(SEND, { c: chatId, t: text }, ann.token)).errors).toBeUndefined();
      // Down past the first retries: graphql-ws's defaults would have ended both subscriptions at the first.
      await expect
        .poll(() => [tries.apollo.n - down.apollo >= 3, tries.urql.n - down.urql >= 3], poll)
        .toEqual([true, true]);
      expect(errors).toEqual([]);

      gateway = await startGateway(env);
      expect(gateway.url).toBe(url);
      const caughtUp = ['before', 'while down 1', 'while down 2'];
      await expect.poll(() => [texts('apollo'), texts('urql')], poll).toEqual([caughtUp, caughtUp]);
      expect((await postGraphQL(url, SEND, { c: chatId, t: 'after' }, ann.token)).errors).toBeUndefined();
      await expect
        .poll(() => [texts('apollo'), texts('urql')], poll)
        .toEqual([
          [...caughtUp, 'after'],
          [...caughtUp, 'after'],
        ]);
      expect(errors).toEqual([]);
    } finally {
      apolloSub.unsubscribe();
      urqlSub.unsubscribe();
      apollo.stop();
      await Promise.all([apolloWs.dispose(), urqlWs.dispose()]);
    }
  });
});
