/** GraphQL documents and subscription helpers shared by the chat tests. */
import type { Client } from 'graphql-ws';
import type { TestApp } from './app.js';

export const CREATE_CHAT = `mutation($m: [String!]!, $t: String, $p: Boolean) {
  createChat(members: $m, message: $t, isPublic: $p) { id } }`;
export const SEND = `mutation($c: ID!, $t: String!) { sendMessage(chatId: $c, text: $t) { id chatId text sender { username } } }`;
export const MARK_READ = 'mutation($c: ID!, $u: Int!) { markRead(chatId: $c, upTo: $u) { readUpTo unreadCount } }';
export const CHAT = `query($c: ID!, $after: Int, $first: Int) {
  chat(id: $c) { id isPublic memberCount lastMessageId readUpTo unreadCount messages(after: $after, first: $first) { id text sender { username } } } }`;
export const MESSAGE_ADDED = `subscription($c: ID, $r: Boolean) {
  messageAdded(chatId: $c, markRead: $r) { id chatId text sender { username } } }`;

export interface Delivered {
  id: number;
  chatId: string;
  text: string;
  sender: { username: string };
}

/** A live subscription that records what it receives. */
export interface Recorder<T> {
  items: T[];
  errors: unknown[];
  closed: { code?: number } | null;
  completed: boolean;
  /** Resolves once `check(items)` holds; rejects after the deadline with what arrived. */
  until(check: (items: T[]) => boolean, timeoutMs?: number): Promise<T[]>;
  stop(): void;
}

export function record<T = Delivered>(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
  field = 'messageAdded',
): Recorder<T> {
  const waiters = new Set<() => void>();
  const poke = () => waiters.forEach((w) => w());
  const r: Recorder<T> = {
    items: [],
    errors: [],
    closed: null,
    completed: false,
    until(check, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const test = () => {
          if (check(r.items)) {
            waiters.delete(test);
            clearTimeout(timer);
            resolve(r.items);
          } else if (r.completed || r.closed) {
            waiters.delete(test);
            clearTimeout(timer);
            reject(
              new Error(
                `ended after ${r.items.length} items: ${JSON.stringify({ errors: r.errors, closed: r.closed })}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(test);
          reject(new Error(`timed out with ${r.items.length} items; errors ${JSON.stringify(r.errors)}`));
        }, timeoutMs);
        waiters.add(test);
        test();
      });
    },
    stop: () => unsubscribe(),
  };
  const unsubscribe = client.subscribe<Record<string, T>>(
    { query, variables },
    {
      next: (value) => {
        if (value.errors) r.errors.push(...value.errors);
        const item = value.data?.[field];
        if (item) r.items.push(item);
        poke();
      },
      error: (err) => {
        if (Array.isArray(err)) r.errors.push(...(err as unknown[]));
        else r.closed = { code: (err as { code?: number }).code };
        r.completed = true;
        poke();
      },
      complete: () => {
        r.completed = true;
        poke();
      },
    },
  );
  return r;
}

export async function createChat(
  t: TestApp,
  token: string,
  members: string[],
  message?: string,
  isPublic = false,
): Promise<string> {
  const r = await t.gql<{ createChat: { id: string } }>(CREATE_CHAT, { m: members, t: message, p: isPublic }, token);
  if (!r.data?.createChat) throw new Error(`createChat failed: ${JSON.stringify(r.errors)}`);
  return r.data.createChat.id;
}

export async function send(t: TestApp, token: string, chatId: string, text: string): Promise<number> {
  const r = await t.gql<{ sendMessage: { id: number } }>(SEND, { c: chatId, t: text }, token);
  if (!r.data?.sendMessage) throw new Error(`sendMessage failed: ${JSON.stringify(r.errors)}`);
  return r.data.sendMessage.id;
}

/** Sends `count` messages "<stem> 1".."<stem> count", `parallel` at a time; returns their ids in text order. */
export async function sendMany(
  t: TestApp,
  token: string,
  chatId: string,
  count: number,
  stem = 'm',
  parallel = 20,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - i) }, (_, j) =>
      send(t, token, chatId, `${stem} ${i + j + 1}`),
    );
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

export const ids = (items: { id: number }[]) => items.map((m) => m.id);
export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
