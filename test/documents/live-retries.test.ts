/**
 * A live subscription whose reads fail (Redis away) retries each second for as long as they do: its waits leave
 * nothing behind on the subscription once they end, so a subscription that recovers holds what it held before
 * (documentChanged, and searchChanged's reads of the documents it tells of).
 */
import { expect, it } from 'vitest';
import type { DocumentSummary } from '../../src/services/documents/documents.js';
import { heapAfterGc } from '../support/heap.js';
import { startTestServices } from '../support/services.js';

const SUBSCRIPTIONS = 1000;
/** Failed reads per subscription: each wait used to leave one reaction (about 600 bytes) on the subscription. */
const FAILURES = 6;
/** Far from both sides: 0.2 to 0.5 MB held now (not depending on FAILURES), ~4 MB when every wait left its reaction. */
const BOUND = (SUBSCRIPTIONS * FAILURES * 600) / 2;

/**
 * Starts SUBSCRIPTIONS streams and takes each one's first item; then, with every read of a document failing
 * SUBSCRIPTIONS * FAILURES times, `change` makes each deliver again: the heap after it, less the heap before it.
 */
async function heldAcrossFailures<T>(
  subscribe: (i: number) => AsyncIterable<T>,
  change: () => Promise<unknown>,
  check: (first: T, after: T) => void,
): Promise<number> {
  const { documents } = services;
  const streams = Array.from({ length: SUBSCRIPTIONS }, (_, i) => subscribe(i)[Symbol.asyncIterator]());
  const firsts: T[] = [];
  for (const stream of streams) firsts.push((await stream.next()).value as T);
  const changed = streams.map((stream) => stream.next());
  const read = documents.summaries.bind(documents);
  let failed = 0;
  documents.summaries = (viewer, input): Promise<(DocumentSummary | null)[]> =>
    failed++ < SUBSCRIPTIONS * FAILURES ? Promise.reject(new Error('Redis away')) : read(viewer, input);
  try {
    const before = heapAfterGc();
    await change();
    for (const [i, next] of changed.entries()) check(firsts[i]!, (await next).value as T);
    changed.length = 0; // what they delivered is not what the subscriptions hold
    expect(failed).toBeGreaterThan(SUBSCRIPTIONS * FAILURES);
    return heapAfterGc() - before;
  } finally {
    documents.summaries = read;
    for (const stream of streams) await stream.return?.(undefined);
  }
}

const { services } = startTestServices();

it('documentChanged holds nothing more after its failed reads than before them', async () => {
  const { documents, liveDocuments, users } = services;
  await users.createSystemUser({ username: 'retry_ann' });
  await documents.indexDocument('retry_ann', { id: 'retry-doc', title: 'Retry', content: 'retried' });
  const held = await heldAcrossFailures(
    () => liveDocuments.documentChanged('retry_ann', { id: 'retry-doc', content: false }),
    () => documents.voteDocument('retry_ann', { id: 'retry-doc' }),
    (first, after) => {
      expect(first).toMatchObject({ votes: 0 });
      expect(after).toMatchObject({ votes: 1 });
    },
  );
  expect(held).toBeLessThan(BOUND);
}, 30_000);

it('searchChanged holds nothing more after its failed reads than before them', async () => {
  const { documents, liveSearch, users } = services;
  await users.createSystemUser({ username: 'retry_bob' });
  await documents.indexDocument('retry_bob', { id: 'retry-found', title: 'Found', content: 'retrysearch' });
  const held = await heldAcrossFailures(
    // a viewer each: subscribers of one viewer in step share their reads
    (i) =>
      liveSearch.searchChanged(`retry_viewer${i}`, {
        query: 'retrysearch',
        sort: 'VOTES_DESC',
        first: 1,
        content: false,
        document: true,
      }),
    () => documents.voteDocument('retry_bob', { id: 'retry-found' }),
    (first, after) => {
      expect(first).toMatchObject({ kind: 'ENTERED', documentId: 'retry-found', score: 0 });
      expect(after).toMatchObject({ kind: 'UPDATED', documentId: 'retry-found', score: 1, document: { votes: 1 } });
    },
  );
  expect(held).toBeLessThan(BOUND);
}, 30_000);
