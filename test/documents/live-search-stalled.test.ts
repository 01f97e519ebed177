/**
 * A searchChanged subscriber whose client stops reading while the index keeps changing keeps the written documents'
 * ids only up to a bound: past it, it takes every document of its top as written and tells them as UPDATED once it
 * reads again (never fewer changes than happened: a client applying them still holds searchDocuments' top).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchChange } from '../../src/services/documents/live-search.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { apply } from './live-processes.js';

const FILLERS = 1500; // past the 1,000 ids a subscriber keeps
const WRITER = 'stall_writer';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('a searchChanged subscriber that stops reading', () => {
  it('keeps at most a bounded set of written ids, then tells its whole top as UPDATED', async () => {
    const { documents, liveSearch } = t.app.services;
    const index = (id: string, title: string) => documents.indexDocument(WRITER, { id, title, content: 'stalledword' });
    for (const [id, title] of <[string, string][]>[
      ['stall-a', 'b1'],
      ['stall-b', 'b2'],
      ['stall-c', 'b3'],
    ])
      await index(id, title);
    const input = { query: 'stalledword', sort: 'TITLE_ASC', first: 3, content: false, document: false } as const;
    const stalled = liveSearch.searchChanged('stall_reader', input)[Symbol.asyncIterator]();
    const changes: SearchChange[] = [(await stalled.next()).value as SearchChange]; // then it stops reading
    // Another subscriber of the same query, read all along: it sees the last write below once this process has
    // followed the change logs that far.
    const reading = liveSearch.searchChanged('stall_other', input)[Symbol.asyncIterator]();
    const followed = (async () => {
      for (;;) {
        const change = (await reading.next()).value as SearchChange;
        if (change.kind === 'ENTERED' && change.documentId === 'stall-0') return;
      }
    })();

    // Documents that match but stay below the top (titles after "b3"), then one that enters first.
    for (let i = 0; i < FILLERS; i++) await index(`stall-fill-${i}`, `z${i}`);
    await index('stall-0', 'a0');
    await followed;

    const until = async (id: string) => {
      for (;;) {
        const change = (await stalled.next()).value as SearchChange;
        changes.push(change);
        if (change.kind === 'ENTERED' && change.documentId === id) return;
      }
    };
    await until('stall-0');
    // One more to enter once it has read that: what comes between is the rest of the changes told on resuming.
    await index('stall-00', 'a00');
    await until('stall-00');
    expect(apply(changes)).toEqual(['stall-0', 'stall-00', 'stall-a']);
    // No filler entered the top, yet the documents that stayed in it are told as written: the ids were not kept.
    expect(changes.filter((c) => c.kind === 'UPDATED').map((c) => c.documentId)).toEqual(['stall-a', 'stall-b']);
    await Promise.all([stalled.return?.(undefined), reading.return?.(undefined)]);
  });
});
