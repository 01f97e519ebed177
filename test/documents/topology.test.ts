/**
 * One query gives one order on one Redis and on a cluster: the same mails, indexed in the same order with the same
 * votes into this project's Redis and into the other kind (a standalone server for the cluster project, a
 * three-master cluster for the standalone one), answer every sort, page and query alike.
 */
import { beforeAll, expect, inject, it } from 'vitest';
import { DOCUMENT_SORTS, type DocumentSort } from '../../src/services/documents/sorts.js';
import { eventually } from '../support/clients.js';
import { disposeLater } from '../support/dispose.js';
import { loadCorpus } from '../support/corpus.js';
import { startCluster, startStandalone, type RunningRedis } from '../support/redis-servers.js';
import { startTestServices, type TestServices } from '../support/services.js';

let other: RunningRedis;
let here: TestServices;
let there: TestServices;

/** Redis's clock in ms, as the scripts read it (lib/now.lua). */
async function redisMs(s: TestServices): Promise<number> {
  const [seconds, micros] = await s.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

beforeAll(async () => {
  other = inject('redis').kind === 'cluster' ? await startStandalone() : await startCluster();
  // Stopped after the services on it are closed (made after it, they are disposed first): a closing domain may
  // still write (searches counted since the last flush).
  disposeLater(() => other.stop());
  here = startTestServices({ SEARCH_CONCURRENCY: '32' });
  there = startTestServices({ SEARCH_CONCURRENCY: '32', KEY_PREFIX: here.config.keyPrefix }, undefined, other.target);
  const corpus = loadCorpus({ every: 20 });
  for (const [i, d] of corpus.entries()) {
    let updated = 0;
    for (const s of [here, there]) {
      updated = Math.max(updated, (await s.services.documents.indexDocument('writer', d)).updatedAt.getTime());
      if (i % 7 === 0) await s.services.documents.voteDocument('voter1', d);
      if (i % 21 === 0) await s.services.documents.voteDocument('voter2', d);
    }
    // distinct update times, so ties by time are ties on both: the next mail waits until both clocks passed this one
    const past = async () => (await Promise.all([here, there].map(redisMs))).every((now) => now > updated);
    expect(await eventually(past, 1000, 1)).toBe(true);
  }
}, 120_000);

const QUERIES = ['mail', 'free money', 'linux +windows', 'click -unsubscribe', 'wor*', 'list* +mail -spam', 'the*'];

it('every sort, query and page gives the same results on standalone and on a cluster', async () => {
  const timed = (sort: DocumentSort) => sort.startsWith('UPDATED') || sort === 'RANKED';
  let compared = 0;
  for (const query of QUERIES) {
    for (const sort of DOCUMENT_SORTS) {
      for (const [offset, first] of [
        [0, 50],
        [120, 30],
      ] as const) {
        const args = { query, sort, offset, first, weights: { updated: 0.001, votes: 1e6 } };
        const [a, b] = await Promise.all([here, there].map((s) => s.services.search.searchDocuments('reader', args)));
        const label = `${query} ${sort} ${offset}`;
        expect(a!.totalCount, label).toBe(b!.totalCount);
        expect(
          a!.hits.map((h) => h.id),
          label,
        ).toEqual(b!.hits.map((h) => h.id));
        // update times come from each Redis's clock; every other score must be the same number
        if (!timed(sort))
          expect(
            a!.hits.map((h) => h.score),
            label,
          ).toEqual(b!.hits.map((h) => h.score));
        compared += a!.hits.length;
      }
    }
  }
  expect(compared).toBeGreaterThan(1000);
});
