/** The clients users use: Apollo Client, urql, and graphql-ws's createClient with retries. */
import { gql } from '@apollo/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniquePrefix, wsClient, type TestApp } from '../support/app.js';
import { MESSAGE_ADDED, createChat, ids, range, record, send, sendMany } from '../support/chats.js';
import { apolloClient, urqlClient } from '../support/frameworks.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});

const MESSAGES = 'subscription($c: ID) { messageAdded(chatId: $c) { id chatId text } }';

describe('Apollo Client', () => {
  it('subscribes through GraphQLWsLink behind split and receives, while queries go over HTTP', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hello apollo');
    const ws = wsClient(t.wsUrl, bob.token);
    const apollo = apolloClient(t.url, ws, bob.token);
    try {
      const texts: string[] = [];
      const done = new Promise<void>((resolve, reject) => {
        const sub = apollo
          .subscribe<{ messageAdded: { text: string } }>({ query: gql(MESSAGES), variables: { c: chatId } })
          .subscribe({
            next: (r) => {
              if (r.data) texts.push(r.data.messageAdded.text);
              if (texts.length === 2) {
                sub.unsubscribe();
                resolve();
              }
            },
            error: reject,
          });
      });
      await send(t, ann.token, chatId, 'second');
      await done;
      expect(texts).toEqual(['hello apollo', 'second']);
      const q = await apollo.query<{ chat: { unreadCount: number } }>({
        query: gql('query($c: ID!) { chat(id: $c) { id unreadCount } }'),
        variables: { c: chatId },
      });
      expect(q.data?.chat.unreadCount).toBe(2);
    } finally {
      apollo.stop();
      await ws.dispose();
    }
  });
});

describe('urql', () => {
  it('subscribes through subscriptionExchange and receives', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hello urql');
    const ws = wsClient(t.wsUrl, bob.token);
    const urql = urqlClient(t.url, ws);
    try {
      const texts: string[] = [];
      await new Promise<void>((resolve, reject) => {
        const subscription = urql
          .subscription<{ messageAdded: { text: string } }>(MESSAGES, { c: chatId })
          .subscribe((r) => {
            if (r.error) reject(r.error);
            if (r.data) texts.push(r.data.messageAdded.text);
            if (texts.length === 1) void send(t, ann.token, chatId, 'second');
            if (texts.length === 2) {
              subscription.unsubscribe();
              resolve();
            }
          });
      });
      expect(texts).toEqual(['hello urql', 'second']);
    } finally {
      await ws.dispose();
    }
  });
});

describe('graphql-ws createClient with retries', () => {
  it('reconnects to another gateway when its own goes away and catches up on what was sent meanwhile', async () => {
    const prefix = uniquePrefix();
    const [a, b] = [await startTestApp({ KEY_PREFIX: prefix }), await startTestApp({ KEY_PREFIX: prefix })];
    const [ann, bob] = [await a.signUp(), await a.signUp()];
    const chatId = await createChat(a, ann.token, [bob.username]);
    const urls = [a.wsUrl, b.wsUrl];
    let connections = 0;
    const client = wsClient(a.wsUrl, bob.token, {
      url: () => urls[connections++ % 2]!,
      retryAttempts: Infinity,
      retryWait: () => new Promise((r) => setTimeout(r, 100)),
      shouldRetry: () => true,
    });
    const live = record(client, MESSAGE_ADDED, { c: chatId, r: true });
    await sendMany(b, ann.token, chatId, 50);
    await live.until((items) => items.length >= 20);
    const closing = a.close(); // closes bob's socket with 1001; the client reconnects to b
    await sendMany(b, ann.token, chatId, 50, 'later');
    await closing;
    const items = await live.until((all) => all.some((m) => m.id === 100), 15_000);
    expect(connections).toBeGreaterThanOrEqual(2);
    // Everything arrives; repeats are only messages not yet marked read when the socket went away.
    expect(new Set(ids(items))).toEqual(new Set(range(1, 100)));
    await client.dispose();
  });
});
