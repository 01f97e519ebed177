/**
 * documentChanged: the document at once, then after each change (index, replace, vote, delete → null, indexed
 * anew), over WebSocket and SSE, across two gateway processes on one Redis, again from the current state after a
 * reconnect, and ended with its token.
 */
import type { Client } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { twoProcesses } from './live-processes.js';
import { sseSubscribe } from '../support/clients.js';

const CHANGED = `subscription($id: ID!) {
  documentChanged(id: $id) { id title content votes viewerVoted author { username } }
}`;
const INDEX = `mutation($id: ID!, $title: String!, $content: String!) {
  indexDocument(id: $id, title: $title, content: $content) { id }
}`;

interface Doc {
  id: string;
  title: string;
  content: string;
  votes: number;
  viewerVoted: boolean;
  author: { username: string };
}

/** A documentChanged subscription recording every delivery, null ones included. */
interface Live {
  states: (Doc | null)[];
  errors: unknown[];
  closed: number | null;
  completed: boolean;
  /** Resolves once `check(states)` holds; rejects with what arrived after the deadline or once the stream ended. */
  until(check: (states: (Doc | null)[]) => boolean, timeoutMs?: number): Promise<void>;
  stop(): void;
}

function follow(client: Client, id: string): Live {
  const live: Live = {
    states: [],
    errors: [],
    closed: null,
    completed: false,
    async until(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(live.states)) {
        if (Date.now() > deadline || live.completed)
          throw new Error(`got ${JSON.stringify(live)} (completed: ${live.completed})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop: () => unsubscribe(),
  };
  const unsubscribe = client.subscribe<{ documentChanged: Doc | null }>(
    { query: CHANGED, variables: { id } },
    {
      next: (value) => {
        if (value.errors) live.errors.push(...value.errors);
        if (value.data) live.states.push(value.data.documentChanged);
      },
      error: (err) => {
        if (Array.isArray(err)) live.errors.push(...(err as unknown[]));
        else live.closed = (err as { code?: number }).code ?? -1;
        live.completed = true;
      },
      complete: () => (live.completed = true),
    },
  );
  return live;
}

const last = (states: (Doc | null)[]) => states[states.length - 1];
const code = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

async function index(t: TestApp, token: string, id: string, title: string, content = `${title} words`) {
  const r = await t.gql(INDEX, { id, title, content }, token);
  if (!r.data) throw new Error(r.text);
}

let t: TestApp;
let alice: { token: string; username: string };
let bob: { token: string; username: string };

beforeAll(async () => {
  t = await startTestApp();
  [alice, bob] = await Promise.all([t.signUp(), t.signUp()]);
});

describe('documentChanged', () => {
  it('delivers null for an unknown id, then each change: created, replaced, voted, deleted (null), indexed anew', async () => {
    const live = follow(t.wsClient(bob.token), 'followed');
    await live.until((s) => s.length === 1);
    expect(live.states).toEqual([null]);

    await index(t, alice.token, 'followed', 'First');
    await live.until((s) => last(s)?.title === 'First');
    expect(last(live.states)).toMatchObject({ id: 'followed', content: 'First words', votes: 0, viewerVoted: false });
    expect(last(live.states)!.author.username).toBe(alice.username);

    await index(t, alice.token, 'followed', 'Second', 'replaced content');
    await live.until((s) => last(s)?.title === 'Second');
    expect(last(live.states)!.content).toBe('replaced content');

    // The subscriber's own vote: votes and viewerVoted as the subscriber sees them.
    expect((await t.gql('mutation { voteDocument(id: "followed") { votes } }', {}, bob.token)).data).toEqual({
      voteDocument: { votes: 1 },
    });
    await live.until((s) => last(s)?.votes === 1);
    expect(last(live.states)).toMatchObject({ title: 'Second', votes: 1, viewerVoted: true });

    // A vote that changes nothing (the same voter again) delivers nothing; the next real change comes next.
    await t.gql('mutation { voteDocument(id: "followed") { votes } }', {}, bob.token);
    await t.gql('mutation { voteDocument(id: "followed") { votes } }', {}, alice.token);
    await live.until((s) => last(s)?.votes === 2);

    expect((await t.gql('mutation { deleteDocument(id: "followed") }', {}, alice.token)).data).toEqual({
      deleteDocument: true,
    });
    await live.until((s) => s.length > 0 && last(s) === null);

    await index(t, alice.token, 'followed', 'Third');
    await live.until((s) => last(s)?.title === 'Third');
    expect(last(live.states)).toMatchObject({ votes: 0, viewerVoted: false });

    // Every delivery differs from the one before it: nothing was delivered twice.
    const seen = live.states.map((s) => JSON.stringify(s));
    expect(seen.every((s, i) => i === 0 || s !== seen[i - 1])).toBe(true);
    expect(live.states.map((s) => s?.title ?? null)).toEqual([
      null,
      'First',
      'Second',
      'Second',
      'Second',
      null,
      'Third',
    ]);
    expect(live.errors).toEqual([]);
    live.stop();
  });

  it('gives a client that subscribes again the current state, whatever happened while it was away', async () => {
    await index(t, alice.token, 'away', 'Before');
    const first = follow(t.wsClient(bob.token), 'away');
    await first.until((s) => last(s)?.title === 'Before');
    first.stop();
    await index(t, alice.token, 'away', 'While away');
    await t.gql('mutation { voteDocument(id: "away") { votes } }', {}, alice.token);
    const again = follow(t.wsClient(bob.token), 'away');
    await again.until((s) => s.length === 1);
    expect(again.states).toEqual([expect.objectContaining({ title: 'While away', votes: 1 })]);
    again.stop();
  });

  it('delivers over SSE as over WebSocket', async () => {
    const sse = await sseSubscribe(t.url, CHANGED, { id: 'over-sse' }, bob.token);
    await sse.until(() => sse.results.length === 1);
    await index(t, alice.token, 'over-sse', 'Streamed');
    await sse.until(() => sse.results.length === 2);
    expect(sse.results.map((r) => (r.data as { documentChanged: Doc | null }).documentChanged?.title ?? null)).toEqual([
      null,
      'Streamed',
    ]);
    await sse.cancel();
  });

  it('carries a write on one gateway process to a subscriber on another', async () => {
    const { a, b, writer, reader } = await twoProcesses();
    const live = follow(b.wsClient(reader), 'shared');
    await live.until((s) => s.length === 1);
    await index(a, writer, 'shared', 'From A');
    await live.until((s) => last(s)?.title === 'From A');
    await a.gql('mutation { deleteDocument(id: "shared") }', {}, writer);
    await live.until((s) => s.length === 3 && last(s) === null);
    live.stop();
  });

  it('stops watching the head once its last subscription ends', async () => {
    const poller = t.app.services.poller;
    const before = poller.size.keys;
    const client = t.wsClient(bob.token);
    const [one, two] = [follow(client, 'watched'), follow(client, 'watched')];
    await one.until((s) => s.length === 1);
    await two.until((s) => s.length === 1);
    expect(poller.size.keys).toBe(before + 1);
    one.stop();
    two.stop();
    const deadline = Date.now() + 5000;
    while (poller.size.keys !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(poller.size.keys).toBe(before);
  });
});

describe('who may follow', () => {
  it('refuses an anonymous socket and a bad id', async () => {
    const anonymous = follow(t.wsClient(), 'any');
    await anonymous.until(() => anonymous.completed).catch(() => undefined);
    expect(anonymous.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
    const bad = follow(t.wsClient(bob.token), 'not an id!');
    await bad.until(() => bad.completed).catch(() => undefined);
    expect(bad.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT' } }]);
    expect(code(await t.gql(CHANGED, { id: 'x' }))).toBe('UNAUTHENTICATED');
  });

  it('ends with the token: a revoked session closes the socket with 4403 and ends an SSE stream', async () => {
    const carol = await t.signUp();
    const live = follow(t.wsClient(carol.token), 'revoked');
    await live.until((s) => s.length === 1);
    const sse = await sseSubscribe(t.url, CHANGED, { id: 'revoked' }, carol.token);
    await sse.until(() => sse.results.length === 1);
    expect((await t.gql('mutation { signOut }', {}, carol.token)).data).toEqual({ signOut: true });
    await live.until(() => live.completed).catch(() => undefined);
    expect(live.closed).toBe(4403);
    await sse.until(() => sse.ended);
    expect(sse.results[sse.results.length - 1]!.errors).toMatchObject([{ extensions: { code: 'UNAUTHENTICATED' } }]);
  });
});
