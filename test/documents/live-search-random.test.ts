/**
 * A random run of 2,000 indexes, votes and deletes through one gateway process, against 50 live queries (every
 * sort, plain words, two-word queries, synonyms, exclusions, prefixes; `first` 1-10) held on two processes: after
 * the last write, every subscriber's top, rebuilt from its changes alone, equals what searchDocuments answers, in
 * order (0 missed, 0 phantom).
 */
import { describe, expect, it } from 'vitest';
import { record, type Recorder } from '../support/chats.js';
import type { TestApp } from '../support/app.js';
import { DOCUMENT_SORTS, type DocumentSort } from '../../src/services/documents/sorts.js';
import { apply, twoProcesses } from './live-processes.js';

const OPERATIONS = 2000;
const LIVE_QUERIES = 50;
const DOCUMENTS = 80;
/** Writes in flight at once. */
const PARALLEL = 4;
const WORDS = ['apple', 'apricot', 'banana', 'cherry', 'damson', 'elder', 'fig', 'grape'].flatMap((w) => [w, `${w}s`]);

const CHANGED = `subscription($q: String!, $sort: DocumentSort, $first: Int) {
  searchChanged(query: $q, sort: $sort, first: $first) { kind documentId position }
}`;
const SEARCH = `query($q: String!, $sort: DocumentSort, $first: Int) {
  searchDocuments(query: $q, sort: $sort, first: $first) { documents { id } }
}`;

interface Change {
  kind: 'ENTERED' | 'UPDATED' | 'LEFT';
  documentId: string;
  position: number | null;
}

let seed = 29;
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const pick = <T>(xs: readonly T[]) => xs[random(xs.length)]!;

function randomQuery(i: number): string {
  const [a, b] = [pick(WORDS), pick(WORDS)];
  switch (i % 5) {
    case 0:
      return a;
    case 1:
      return `${a} ${b}`;
    case 2:
      return `${a} +${b}`;
    case 3:
      return `${a} -${b}`;
    default:
      return `${a.slice(0, 3)}*`;
  }
}

async function ok(r: Promise<{ status: number; text: string }>) {
  const done = await r;
  if (done.status !== 200) throw new Error(done.text);
}

describe('live search under a random run', () => {
  it(`keeps ${LIVE_QUERIES} live queries equal to searchDocuments through ${OPERATIONS} writes`, async () => {
    const { a, b, writer } = await twoProcesses({ LIVE_RECONCILE_MS: '300' });
    const voters = await Promise.all([1, 2, 3, 4, 5].map(() => a.signUp()));
    const apps = [a, b];
    // 20 a socket at most (LIVE_QUERIES_PER_SOCKET): three sockets on each process.
    const sockets = [0, 1, 2, 3, 4, 5].map((i) => apps[i % 2]!.wsClient(writer));
    const lives: { q: string; sort: DocumentSort; first: number; app: TestApp; live: Recorder<Change> }[] = [];
    for (let i = 0; i < LIVE_QUERIES; i++) {
      const [q, sort, first] = [randomQuery(i), DOCUMENT_SORTS[i % DOCUMENT_SORTS.length]!, 1 + random(10)];
      const live = record<Change>(sockets[i % 6]!, CHANGED, { q, sort, first }, 'searchChanged');
      lives.push({ q, sort, first, app: apps[i % 2]!, live });
    }

    const operation = () => {
      const id = `d${random(DOCUMENTS)}`;
      const kind = random(10);
      if (kind < 5) {
        const words = Array.from({ length: 2 + random(5) }, () => pick(WORDS)).join(' ');
        return ok(
          a.gql(
            'mutation($id: ID!, $t: String!, $c: String!) { indexDocument(id: $id, title: $t, content: $c) { id } }',
            { id, t: `${pick(WORDS)} ${random(1000)}`, c: words },
            writer,
          ),
        );
      }
      // A vote or delete of a document that is not there answers an error: part of the run.
      if (kind < 8) return a.gql('mutation($id: ID!) { voteDocument(id: $id) { id } }', { id }, pick(voters).token);
      return a.gql('mutation($id: ID!) { deleteDocument(id: $id) }', { id }, writer);
    };
    for (let done = 0; done < OPERATIONS; done += PARALLEL)
      await Promise.all(Array.from({ length: Math.min(PARALLEL, OPERATIONS - done) }, operation));

    let missed = 0;
    let phantom = 0;
    const wrong: string[] = [];
    for (const { q, sort, first, app, live } of lives) {
      let expected: string[] = [];
      let held: string[] = [];
      const deadline = Date.now() + 20_000;
      do {
        const r = await app.gql<{ searchDocuments: { documents: { id: string }[] } }>(
          SEARCH,
          { q, sort, first },
          writer,
        );
        expected = r.data!.searchDocuments.documents.map((d) => d.id);
        held = apply(live.items);
        if (held.join() === expected.join()) break;
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < deadline);
      missed += expected.filter((id) => !held.includes(id)).length;
      phantom += held.filter((id) => !expected.includes(id)).length;
      if (held.join() !== expected.join()) wrong.push(`${q} ${sort} ${first}: ${held.join()} != ${expected.join()}`);
      expect(live.errors).toEqual([]);
    }
    console.log(
      `live search: ${OPERATIONS} writes, ${LIVE_QUERIES} live queries on 2 processes: ${missed} missed, ${phantom} phantom, ${wrong.length} out of order; ${lives.reduce((n, l) => n + l.live.items.length, 0)} changes delivered`,
    );
    expect(wrong).toEqual([]);
    expect([missed, phantom]).toEqual([0, 0]);
  }, 240_000);
});
