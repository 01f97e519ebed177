/**
 * searchChanged: the current top as ENTERED for every sort, then ENTERED, UPDATED and LEFT as documents are
 * indexed, voted for and deleted, so that a client applying the changes holds what searchDocuments answers; across
 * two gateway processes; from the current top again after a reconnect; RELEVANCE converging through writes that
 * miss the query's words; at most a reconciliation's search for identical RELEVANCE live queries and none under a
 * sort the change log carries; the top plus reserve moved by the log alone (refilled, run dry, RELEVANCE scored from
 * the entry, votes, titles, ties by id); urql, with no document read when none is selected; bounds, a
 * subscription completed before it started not counted against its socket.
 */
import { gql } from '@apollo/client';
import { crc32 } from 'node:zlib';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { MailboxCommands } from '../../src/redis/mailbox/commands.js';
import { doorbellsSettled, sseSubscribe, startTestApp, wsClient, type TestApp } from '../support/app.js';
import { apply, twoProcesses } from './live-processes.js';
import { record, type Recorder } from '../support/chats.js';
import { DOCUMENT_SORTS, type DocumentSort } from '../../src/services/documents/sorts.js';
import { apolloClient, urqlClient } from '../support/frameworks.js';
import { rawWsSocket } from '../support/clients.js';

const CHANGED = `subscription($q: String!, $sort: DocumentSort, $first: Int) {
  searchChanged(query: $q, sort: $sort, first: $first) { kind documentId score position document { id title votes } }
}`;
const INDEX = `mutation($id: ID!, $title: String!, $content: String!) {
  indexDocument(id: $id, title: $title, content: $content) { id }
}`;
const SEARCH = `query($q: String!, $sort: DocumentSort, $first: Int) {
  searchDocuments(query: $q, sort: $sort, first: $first) { hits { score document { id } } }
}`;

interface Change {
  kind: 'ENTERED' | 'UPDATED' | 'LEFT';
  documentId: string;
  score: number;
  position: number | null;
  document: { id: string; title: string; votes: number } | null;
}

const code = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

async function index(t: TestApp, token: string, id: string, content: string, title = id) {
  const r = await t.gql(INDEX, { id, title, content }, token);
  if (!r.data) throw new Error(r.text);
}

async function top(t: TestApp, token: string, q: string, sort: DocumentSort, first: number) {
  const r = await t.gql<{ searchDocuments: { hits: { score: number; document: { id: string } }[] } }>(
    SEARCH,
    { q, sort, first },
    token,
  );
  if (!r.data) throw new Error(r.text);
  return r.data.searchDocuments.hits.map((h) => ({ id: h.document.id, score: h.score }));
}

/** Waits until the recorder's reconstructed list equals searchDocuments' top (asked again on each try). */
async function converges(t: TestApp, token: string, live: Recorder<Change>, q: string, sort: DocumentSort, first = 3) {
  let expected: string[] = [];
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    expected = (await top(t, token, q, sort, first)).map((h) => h.id);
    if (JSON.stringify(apply(live.items)) === JSON.stringify(expected)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(apply(live.items), `${sort}: ${JSON.stringify(live.items)}`).toEqual(expected);
}

let t: TestApp;
let alice: { token: string; username: string };

beforeAll(async () => {
  t = await startTestApp({ LIVE_QUERIES_PER_SOCKET: '3' });
  alice = await t.signUp();
});

describe('searchChanged', () => {
  it('starts with the current top as ENTERED, in order, for every sort, as searchDocuments gives it', async () => {
    for (const [i, title] of ['Delta', 'alpha', 'Charlie', 'bravo', 'echo'].entries())
      await index(t, alice.token, `start-${title.toLowerCase()}`, `startword ${'filler '.repeat(i)}`, title);
    await t.gql('mutation { voteDocument(id: "start-charlie") { votes } }', {}, alice.token);
    const client = t.wsClient(alice.token);
    for (const sort of DOCUMENT_SORTS) {
      const live = record<Change>(client, CHANGED, { q: 'startword', sort, first: 3 }, 'searchChanged');
      await live.until((items) => items.length === 3);
      const expected = await top(t, alice.token, 'startword', sort, 3);
      expect(
        live.items.map((c) => [c.kind, c.documentId, c.position, c.score]),
        sort,
      ).toEqual(expected.map((h, i) => ['ENTERED', h.id, i, h.score]));
      expect(live.items.map((c) => c.document?.id)).toEqual(expected.map((h) => h.id));
      live.stop();
    }
  });

  it('delivers ENTERED, UPDATED and LEFT as writes move documents into, within and out of the top', async () => {
    for (const id of ['m1', 'm2', 'm3']) await index(t, alice.token, id, 'moveword');
    const client = t.wsClient(alice.token);
    const byTime = record<Change>(client, CHANGED, { q: 'moveword', sort: 'UPDATED_DESC', first: 2 }, 'searchChanged');
    const byVotes = record<Change>(client, CHANGED, { q: 'moveword', sort: 'VOTES_DESC', first: 2 }, 'searchChanged');
    await byTime.until((items) => items.length === 2);
    await byVotes.until((items) => items.length === 2);
    expect(apply(byTime.items)).toEqual(['m3', 'm2']);
    expect(apply(byVotes.items)).toEqual(['m1', 'm2']);

    // A new document enters at the top of the time order and pushes m2 out.
    await index(t, alice.token, 'm4', 'moveword new');
    await byTime.until((items) => items.length === 4);
    expect(byTime.items.slice(2).map((c) => [c.kind, c.documentId, c.position])).toEqual([
      ['LEFT', 'm2', null],
      ['ENTERED', 'm4', 0],
    ]);
    // A vote moves m3 into the votes top, first.
    await t.gql('mutation { voteDocument(id: "m3") { votes } }', {}, alice.token);
    await byVotes.until((items) => apply(items)[0] === 'm3');
    expect(byVotes.items.slice(2).map((c) => [c.kind, c.documentId, c.position])).toEqual([
      ['LEFT', 'm2', null],
      ['ENTERED', 'm3', 0],
    ]);
    expect(byVotes.items[3]!.score).toBe(1);
    // Replacing a document in the top: UPDATED, in place, with the new title.
    await index(t, alice.token, 'm1', 'moveword again', 'Renamed');
    await byVotes.until((items) => items.some((c) => c.kind === 'UPDATED' && c.document?.title === 'Renamed'));
    // ... and it moved to the top of the time order (UPDATED from position 1 to 0).
    await byTime.until((items) => apply(items)[0] === 'm1');
    // A replacement without the word leaves; a deletion leaves and the next one enters.
    await index(t, alice.token, 'm4', 'other words');
    await t.gql('mutation { deleteDocument(id: "m3") }', {}, alice.token);
    await converges(t, alice.token, byTime, 'moveword', 'UPDATED_DESC', 2);
    await converges(t, alice.token, byVotes, 'moveword', 'VOTES_DESC', 2);
    // The deleted document's place is refilled: m2 comes back.
    expect(apply(byTime.items)).toEqual(['m1', 'm2']);
    for (const live of [byTime, byVotes]) {
      expect(live.errors).toEqual([]);
      live.stop();
    }
  });

  it('keeps every sort right through a random run of indexes, votes and deletes', async () => {
    const words = ['red', 'green', 'blue'];
    const voters = await Promise.all([1, 2, 3].map(() => t.signUp()));
    // Each on a socket of its own (LIVE_QUERIES_PER_SOCKET is 3 here).
    const all = DOCUMENT_SORTS.filter((s) => s !== 'RELEVANCE').map((sort) => ({
      sort,
      live: record<Change>(t.wsClient(alice.token), CHANGED, { q: 'red', sort, first: 3 }, 'searchChanged'),
    }));
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 60; i++) {
      const id = `r${random(8)}`;
      const op = random(6);
      if (op < 3) await index(t, alice.token, id, `${words[random(3)]} ${words[random(3)]}`, `T${random(100)}`);
      else if (op < 5)
        await t.gql('mutation($id: ID!) { voteDocument(id: $id) { id } }', { id }, voters[random(3)]!.token);
      else await t.gql('mutation($id: ID!) { deleteDocument(id: $id) }', { id }, alice.token);
    }
    for (const { sort, live } of all) {
      await converges(t, alice.token, live, 'red', sort);
      expect(live.errors).toEqual([]);
    }
  });

  it('converges under RELEVANCE when writes that miss the query move idf (LIVE_RECONCILE_MS)', async () => {
    const quick = await startTestApp({ LIVE_RECONCILE_MS: '200' });
    const bob = await quick.signUp();
    await index(quick, bob.token, 'a', 'xray xray xray yak');
    await index(quick, bob.token, 'b', 'xray yak yak yak');
    const live = record<Change>(quick.wsClient(bob.token), CHANGED, { q: 'xray yak', first: 2 }, 'searchChanged');
    await live.until((items) => items.length === 2);
    expect(apply(live.items)).toEqual(['a', 'b']); // a tie, broken by id
    // Documents with xray alone match nothing of the query's, yet make xray common: b (rich in yak) overtakes.
    for (let i = 0; i < 5; i++) await index(quick, bob.token, `x${i}`, 'xray');
    await converges(quick, bob.token, live, 'xray yak', 'RELEVANCE', 2);
    expect(apply(live.items)).toEqual(['b', 'a']);
  });

  it('carries a write on one process to a subscriber on another, and gives a reconnect the current top', async () => {
    const { a, b, writer, reader } = await twoProcesses();
    const live = record<Change>(b.wsClient(reader), CHANGED, { q: 'far', sort: 'ID_ASC', first: 3 }, 'searchChanged');
    await index(a, writer, 'far-2', 'far away');
    await live.until((items) => apply(items).includes('far-2'));
    expect(live.items[0]).toMatchObject({ kind: 'ENTERED', documentId: 'far-2', position: 0 });
    live.stop();
    // Away while 100 writes happen; subscribing again gives exactly the top searchDocuments gives.
    for (let i = 0; i < 100; i++) {
      const id = `far-${i % 10}`;
      if (i % 7 === 3) await a.gql('mutation($id: ID!) { deleteDocument(id: $id) }', { id }, writer);
      else await index(a, writer, id, i % 3 === 0 ? 'near' : 'far');
    }
    const again = record<Change>(b.wsClient(reader), CHANGED, { q: 'far', sort: 'ID_ASC', first: 3 }, 'searchChanged');
    await again.until((items) => items.length === 3);
    expect(again.items.every((c) => c.kind === 'ENTERED')).toBe(true);
    expect(apply(again.items)).toEqual((await top(b, reader, 'far', 'ID_ASC', 3)).map((h) => h.id));
  });

  it('searches RELEVANCE live queries at most once a reconciliation however many subscribe, never for a sort the change log carries', async () => {
    const searches = countSearches();
    try {
      const subs = (['ID_ASC', 'RELEVANCE'] as const).flatMap((sort) =>
        Array.from({ length: 3 }, () =>
          record<Change>(t.wsClient(alice.token), CHANGED, { q: 'shared', sort, first: 2 }, 'searchChanged'),
        ),
      );
      await index(t, alice.token, 'shared-1', 'shared');
      await Promise.all(subs.map((s) => s.until((items) => apply(items).join() === 'shared-1')));
      const before = { ...searches.bySort };
      await index(t, alice.token, 'unrelated', 'nothing in common');
      await index(t, alice.token, 'shared-0', 'shared');
      await Promise.all(subs.map((s) => s.until((items) => apply(items).join() === 'shared-0,shared-1')));
      expect(searches.bySort.ID_ASC ?? 0).toBe(before.ID_ASC ?? 0);
      // not for the write (scored from its log entry), not once per subscriber: a reconciliation may add one
      expect((searches.bySort.RELEVANCE ?? 0) - (before.RELEVANCE ?? 0)).toBeLessThanOrEqual(1);
      for (const s of subs) s.stop();
    } finally {
      searches.restore();
    }
  });
});

/** Counts the live searches (those of a process's evaluator) by sort, until `restore`. */
function countSearches() {
  const search = t.app.services.search;
  const original = search.searchDocuments.bind(search);
  const bySort: Partial<Record<DocumentSort, number>> = {};
  search.searchDocuments = (user, args) => {
    if (user.startsWith('live:') && args.sort) bySort[args.sort] = (bySort[args.sort] ?? 0) + 1;
    return original(user, args);
  };
  return { bySort, restore: () => (search.searchDocuments = original) };
}

describe('a live query moved by the change log alone (top plus reserve)', () => {
  const subscribe = (q: string, sort: DocumentSort, first: number) =>
    record<Change>(t.wsClient(alice.token), CHANGED, { q, sort, first }, 'searchChanged');
  const moves = (live: Recorder<Change>, from: number) =>
    live.items.slice(from).map((c) => [c.kind, c.documentId, c.position]);

  it('refills its top from the reserve without a search, and searches again once the reserve runs dry', async () => {
    // first 2 keeps 12 (a reserve of 10) of 14 matches
    for (let i = 0; i < 14; i++) await index(t, alice.token, `dry-${String(i).padStart(2, '0')}`, 'dryword');
    const live = subscribe('dryword', 'ID_ASC', 2);
    await live.until((items) => items.length === 2);
    const searches = countSearches();
    try {
      for (let i = 0; i < 10; i++) {
        await t.gql('mutation($id: ID!) { deleteDocument(id: $id) }', { id: `dry-0${i}` }, alice.token);
        await converges(t, alice.token, live, 'dryword', 'ID_ASC', 2);
      }
      expect(apply(live.items)).toEqual(['dry-10', 'dry-11']);
      expect(searches.bySort.ID_ASC ?? 0).toBe(0);
      // the 11th deletion leaves one kept of two: dry-12 comes from a search
      await t.gql('mutation { deleteDocument(id: "dry-10") }', {}, alice.token);
      await converges(t, alice.token, live, 'dryword', 'ID_ASC', 2);
      expect(apply(live.items)).toEqual(['dry-11', 'dry-12']);
      expect(searches.bySort.ID_ASC).toBe(1);
    } finally {
      searches.restore();
      live.stop();
    }
  });

  it('scores a written document under RELEVANCE from its log entry (BM25 by the last search) without searching, then reconciles', async () => {
    // one LIVE_RECONCILE_MS past the test: every move below comes from the log alone
    const slow = await startTestApp({ LIVE_RECONCILE_MS: '600000' });
    const bob = await slow.signUp();
    // one word, every document of one length: the order (tf, then id) does not depend on idf or the average length
    const doc = (id: string, zetas: number) =>
      index(slow, bob.token, id, `${'zeta '.repeat(zetas)}${'pad '.repeat(6 - zetas)}`, 'same');
    for (const [id, n] of [
      ['z1', 1],
      ['z2', 2],
      ['z3', 3],
      ['z4', 4],
    ] as const)
      await doc(id, n);
    const live = record<Change>(slow.wsClient(bob.token), CHANGED, { q: 'zeta', first: 2 }, 'searchChanged');
    await live.until((items) => items.length === 2);
    expect(apply(live.items)).toEqual(['z4', 'z3']);
    const search = slow.app.services.search;
    const original = search.searchDocuments.bind(search);
    let searched = 0;
    search.searchDocuments = (user, args) => ((searched += user.startsWith('live:') ? 1 : 0), original(user, args));
    try {
      // z1 climbs to the top, z2 enters the reserve's head, z4 leaves the top by a write without the word
      await doc('z1', 5);
      await converges(slow, bob.token, live, 'zeta', 'RELEVANCE', 2);
      expect(apply(live.items)).toEqual(['z1', 'z4']);
      await index(slow, bob.token, 'z4', 'pad pad pad pad pad pad', 'same');
      await converges(slow, bob.token, live, 'zeta', 'RELEVANCE', 2);
      expect(apply(live.items)).toEqual(['z1', 'z3']);
      const entered = live.items.find((c) => c.documentId === 'z1' && c.kind === 'ENTERED');
      // its score is BM25 by the statistics of the last search: z1 with 5 of 6 beats z4's 4 of 6
      expect(entered?.score).toBeGreaterThan(live.items.find((c) => c.documentId === 'z4')!.score);
      expect(searched).toBe(0);
    } finally {
      search.searchDocuments = original;
      live.stop();
    }
  });

  it('moves a document within the top by its votes, ties in votes by id', async () => {
    for (const id of ['tv-a', 'tv-b', 'tv-c', 'tv-d']) await index(t, alice.token, id, 'tieword');
    const live = subscribe('tieword', 'VOTES_DESC', 3);
    await live.until((items) => items.length === 3);
    expect(apply(live.items)).toEqual(['tv-a', 'tv-b', 'tv-c']);
    await t.gql('mutation { voteDocument(id: "tv-c") { votes } }', {}, alice.token);
    await live.until((items) => items.length === 4);
    expect(moves(live, 3)).toEqual([['UPDATED', 'tv-c', 0]]);
    expect(live.items[3]!.score).toBe(1);
    // tv-0 ties tv-a and tv-b at no votes and comes before them by id; tv-b leaves
    await index(t, alice.token, 'tv-0', 'tieword');
    await live.until((items) => items.length === 6);
    expect(moves(live, 4)).toEqual([
      ['LEFT', 'tv-b', null],
      ['ENTERED', 'tv-0', 1],
    ]);
    await converges(t, alice.token, live, 'tieword', 'VOTES_DESC', 3);
    live.stop();
  });

  it('moves a document whose title changes under TITLE_ASC and TITLE_DESC, ties in titles by id', async () => {
    for (const [id, title] of [
      ['tt-1', 'bravo'],
      ['tt-2', 'charlie'],
      ['tt-3', 'delta'],
    ])
      await index(t, alice.token, id!, 'titleword', title);
    const asc = subscribe('titleword', 'TITLE_ASC', 2);
    const desc = subscribe('titleword', 'TITLE_DESC', 2);
    await asc.until((items) => items.length === 2);
    await desc.until((items) => items.length === 2);
    expect(apply(asc.items)).toEqual(['tt-1', 'tt-2']);
    expect(apply(desc.items)).toEqual(['tt-3', 'tt-2']);
    // tt-3 renamed Alpha: first under TITLE_ASC (tt-2 leaves), last under TITLE_DESC (it leaves, tt-1 enters)
    await index(t, alice.token, 'tt-3', 'titleword', 'Alpha');
    await asc.until((items) => apply(items).join() === 'tt-3,tt-1');
    await desc.until((items) => apply(items).join() === 'tt-2,tt-1');
    // tt-0 titled Charlie ties tt-2 ("charlie"): before it by id in both orders
    await index(t, alice.token, 'tt-0', 'titleword', 'Charlie');
    await desc.until((items) => apply(items).join() === 'tt-0,tt-2');
    await converges(t, alice.token, asc, 'titleword', 'TITLE_ASC', 2);
    await converges(t, alice.token, desc, 'titleword', 'TITLE_DESC', 2);
    asc.stop();
    desc.stop();
  });
});

describe('a reader that falls behind the change log', () => {
  // Standalone only: holding the doorbell connection needs its one connection.
  it.runIf(inject('redis').kind === 'standalone')(
    'sees the gap and searches again, every document of the top UPDATED, and converges',
    async () => {
      const slow = await startTestApp({ POLL_AUDIT_MS: '600000' });
      const bob = await slow.signUp();
      for (const id of ['g-a', 'g-b', 'g-c']) await index(slow, bob.token, id, 'gapword');
      const live = record<Change>(
        slow.wsClient(bob.token),
        CHANGED,
        { q: 'gapword', sort: 'ID_ASC', first: 3 },
        'searchChanged',
      );
      await live.until((items) => items.length === 3);
      // More writes in one shard than its log keeps, heard late: the entries past the cursor are trimmed first.
      const shard = (id: string) => crc32(id) % slow.config.search.shards;
      const ids = Array.from({ length: 5000 }, (_, i) => `gap-${i}`).filter((id) => shard(id) === shard('g-0'));
      // A resync (one comes about a second after a process starts) would read the heads while they are held.
      await doorbellsSettled(slow.app);
      const resume = (slow.app.services.poller as unknown as { commands: MailboxCommands }).commands.doorbells.hold();
      const { documents } = slow.app.services;
      for (let i = 0; i < 1100; i += 50)
        await Promise.all(
          ids.slice(i, i + 50).map((id) => documents.indexDocument(bob.username, { id, title: id, content: 'other' })),
        );
      await documents.indexDocument(bob.username, { id: 'g-0', title: 'g-0', content: 'gapword' });
      resume(); // every write made before it hears a ring, however long they took
      await live.until((items) => apply(items).join() === 'g-0,g-a,g-b', 20_000);
      expect(live.items.slice(3).map((c) => [c.kind, c.documentId, c.position])).toEqual([
        ['LEFT', 'g-c', null],
        ['ENTERED', 'g-0', 0],
        ['UPDATED', 'g-a', 1],
        ['UPDATED', 'g-b', 2],
      ]);
    },
    40_000,
  );
});

describe('transports and clients', () => {
  it('delivers over SSE and through Apollo Client (GraphQLWsLink behind split) alike', async () => {
    await index(t, alice.token, 'via-1', 'viaword');
    const sse = await sseSubscribe(t.url, CHANGED, { q: 'viaword', sort: 'ID_ASC', first: 2 }, alice.token);
    const ws = wsClient(t.wsUrl, alice.token);
    const apollo = apolloClient(t.url, ws, alice.token);
    const viaApollo: Change[] = [];
    const subscription = apollo
      .subscribe<{ searchChanged: Change }>({
        query: gql(CHANGED),
        variables: { q: 'viaword', sort: 'ID_ASC', first: 2 },
      })
      .subscribe({ next: (r) => r.data && viaApollo.push(r.data.searchChanged) });
    try {
      await sse.until(() => sse.results.length === 1);
      const deadline = Date.now() + 10_000;
      while (viaApollo.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await index(t, alice.token, 'via-0', 'viaword');
      await sse.until(() => sse.results.length === 2);
      while (viaApollo.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const viaSse = sse.results.map((r) => (r.data as { searchChanged: Change }).searchChanged);
      expect(apply(viaSse)).toEqual(['via-0', 'via-1']);
      expect(apply(viaApollo)).toEqual(['via-0', 'via-1']);
      expect(viaSse[1]).toMatchObject({ kind: 'ENTERED', documentId: 'via-0', position: 0 });
    } finally {
      subscription.unsubscribe();
      apollo.stop();
      await sse.cancel();
      await ws.dispose();
    }
  });

  it('delivers through urql (subscriptionExchange over graphql-ws), reading no document when none is selected', async () => {
    const ws = wsClient(t.wsUrl, alice.token);
    const urql = urqlClient(t.url, ws);
    const documents = t.app.services.documents;
    const summaries = documents.summaries.bind(documents);
    let reads = 0;
    documents.summaries = (viewer, input) => ((reads += 1), summaries(viewer, input));
    const follow = (fields: string, until: (ids: string[]) => boolean) => {
      const items: Change[] = [];
      return new Promise<Change[]>((resolve, reject) => {
        const subscription = urql
          .subscription<{ searchChanged: Change }>(
            `subscription($q: String!) { searchChanged(query: $q, first: 2) { ${fields} } }`,
            { q: 'urqlword' },
          )
          .subscribe((r) => {
            if (r.error) reject(r.error);
            if (r.data) items.push(r.data.searchChanged);
            if (until(apply(items))) {
              subscription.unsubscribe();
              resolve(items);
            }
          });
      });
    };
    try {
      await index(t, alice.token, 'urql-1', 'urqlword');
      const bare = follow('kind documentId score position', (ids) => ids.join() === 'urql-2,urql-1');
      await new Promise((r) => setTimeout(r, 200));
      await index(t, alice.token, 'urql-2', 'urqlword urqlword');
      const items = await bare;
      expect(items.every((c) => !('document' in c))).toBe(true);
      expect(reads).toBe(0);
      const full = await follow('kind documentId score position document { id title }', (ids) => ids.length === 2);
      expect(full.map((c) => c.document?.id)).toEqual(['urql-2', 'urql-1']);
      expect(reads).toBeGreaterThan(0);
    } finally {
      documents.summaries = summaries;
      await ws.dispose();
    }
  });

  it('ends with the token: a revoked session closes the socket with 4403', async () => {
    const carol = await t.signUp();
    const live = record<Change>(t.wsClient(carol.token), CHANGED, { q: 'revokedword' }, 'searchChanged');
    await index(t, carol.token, 'revoked-doc', 'revokedword');
    await live.until((items) => apply(items).includes('revoked-doc'));
    expect((await t.gql('mutation { signOut }', {}, carol.token)).data).toEqual({ signOut: true });
    await live.until(() => live.closed !== null);
    expect(live.closed).toEqual({ code: 4403 });
  });
});

describe('bounds', () => {
  it('refuses first past 100 and a query with no word (BAD_USER_INPUT), and a socket past LIVE_QUERIES_PER_SOCKET (BUSY)', async () => {
    const client = t.wsClient(alice.token);
    const tooMany = record<Change>(client, CHANGED, { q: 'word', first: 101 }, 'searchChanged');
    await tooMany.until(() => tooMany.completed);
    expect(tooMany.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT' } }]);
    const noWord = record<Change>(client, CHANGED, { q: 'the a' }, 'searchChanged');
    await noWord.until(() => noWord.completed);
    expect(noWord.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT' } }]);
    const held = [1, 2, 3].map((i) => record<Change>(client, CHANGED, { q: `bound${i}` }, 'searchChanged'));
    const busy = record<Change>(client, CHANGED, { q: 'bound4' }, 'searchChanged');
    await busy.until(() => busy.completed);
    expect(busy.errors).toMatchObject([{ extensions: { code: 'BUSY' } }]);
    held[0]!.stop();
    // Once the server has ended it, the socket may follow another.
    await index(t, alice.token, 'bound5-doc', 'bound5');
    let after = record<Change>(client, CHANGED, { q: 'bound5' }, 'searchChanged');
    for (
      let tries = 0;
      !(await after
        .until((items) => items.length === 1)
        .then(
          () => true,
          () => false,
        ));
      tries++
    ) {
      expect(after.errors).toMatchObject([{ extensions: { code: 'BUSY' } }]);
      expect(tries).toBeLessThan(50);
      after = record<Change>(client, CHANGED, { q: 'bound5' }, 'searchChanged');
    }
    expect(after.items).toMatchObject([{ kind: 'ENTERED', documentId: 'bound5-doc', position: 0 }]);
    expect(code(await t.gql(CHANGED, { q: 'word' }))).toBe('UNAUTHENTICATED');
  });

  it('counts no subscription a socket completed before it started (StrictMode subscribes and completes at once)', async () => {
    await index(t, alice.token, 'strict-doc', 'strictword');
    // A raw socket: each complete follows its subscribe in the same burst, before the server ever reads the stream.
    const { socket, send, next } = await rawWsSocket(t.wsUrl, { authorization: `Bearer ${alice.token}` });
    const subscribe = (id: string) =>
      send({ id, type: 'subscribe', payload: { query: CHANGED, variables: { q: 'strictword' } } });
    // twice LIVE_QUERIES_PER_SOCKET (3)
    for (let i = 0; i < 6; i++) {
      subscribe(`s${i}`);
      send({ id: `s${i}`, type: 'complete' });
    }
    subscribe('last');
    expect(await next()).toMatchObject({
      id: 'last',
      type: 'next',
      payload: { data: { searchChanged: { kind: 'ENTERED', documentId: 'strict-doc', position: 0 } } },
    });
    socket.close();
  });
});
