/**
 * Writes beside queries: writers replace documents (switching each between a "red apple" and a "blue banana"
 * version, several writers on the same documents) and delete some, as fast as they can, while readers search.
 * A checker sees no result that shows a document half-indexed (a match for words of two versions at once, or a
 * loaded document whose title and content are of different versions) or already deleted; afterwards the index's
 * counts agree with its postings.
 */
import { beforeAll, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import { startTestServices, type TestServices } from '../support/services.js';

const DOCS = 60;
const RUN_MS = 3000;
let s: TestServices;

const version = (i: number, v: number) =>
  v % 2 === 0
    ? { title: `red v${v}`, content: `red apple orchard doc${i} tag${v} ${'filler '.repeat(i % 5)}` }
    : { title: `blue v${v}`, content: `blue banana grove doc${i} tag${v} ${'filler '.repeat(i % 3)}` };

beforeAll(async () => {
  s = startTestServices({ SEARCH_CONCURRENCY: '64' });
  await Promise.all(
    Array.from({ length: DOCS }, (_, i) => {
      const v = version(i, 0);
      return s.services.documents.indexDocument('writer', { id: `d${i}`, title: v.title, content: v.content });
    }),
  );
});

it('no search shows a document half-indexed or already deleted, at full write speed', async () => {
  const deletedAt = new Map<string, number>();
  const versions = new Map<string, number>();
  let updates = 0;
  let searches = 0;
  const problems: string[] = [];
  const stop = Date.now() + RUN_MS;
  const running = () => Date.now() < stop;

  // the last document of each ten is never replaced; they are deleted one by one during the run
  const deletable = (i: number) => i % 10 === 9;
  const writer = async (seed: number) => {
    for (let n = seed; running(); n += 7) {
      const i = n % DOCS;
      if (deletable(i)) continue;
      const v = (versions.get(`d${i}`) ?? 0) + 1;
      versions.set(`d${i}`, v);
      const doc = version(i, v);
      await s.services.documents.indexDocument('writer', { id: `d${i}`, title: doc.title, content: doc.content });
      updates++;
    }
  };
  const deleter = async () => {
    for (let i = 9; i < DOCS; i += 10) {
      await new Promise((r) => setTimeout(r, RUN_MS / 10));
      expect(await s.services.documents.deleteDocument('writer', { id: `d${i}` })).toBe(true);
      deletedAt.set(`d${i}`, performance.now());
    }
  };

  const reader = async (queries: string[]) => {
    for (let n = 0; running(); n++) {
      const query = queries[n % queries.length]!;
      const started = performance.now();
      const sort = (['RELEVANCE', 'UPDATED_DESC', 'TITLE_ASC', 'ID_DESC'] as const)[n % 4]!;
      const r = await s.services.search.searchDocuments('reader', { query, sort, first: 100, offset: 0 });
      searches++;
      if (/red banana|blue apple|apple banana|red blue|orchard grove/.test(query) && r.totalCount > 0)
        problems.push(`"${query}" matched ${r.totalCount}: words of two versions at once`);
      for (const h of r.hits) {
        const gone = deletedAt.get(h.id);
        if (gone !== undefined && gone < started) problems.push(`"${query}" returned ${h.id}, deleted before it ran`);
      }
      const docs = await s.services.documents.documents('reader', { ids: r.hits.map((h) => h.id) });
      for (const d of docs) {
        if (!d) continue;
        const tag = /v(\d+)/.exec(d.title)![1];
        if (!d.content.includes(`tag${tag} `)) problems.push(`${d.id}: title of v${tag}, content of another version`);
      }
    }
  };

  const started = performance.now();
  await Promise.all([
    ...Array.from({ length: 6 }, (_, w) => writer(w)),
    deleter(),
    reader(['red apple', 'red banana', 'orchard']),
    reader(['blue banana', 'blue apple', 'grove']),
    reader(['red +blue', 'apple banana', 'orchard grove', 'tag*']),
  ]);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `concurrency: ${Math.round(updates / seconds)} replacements/s and ${Math.round(searches / seconds)} searches/s for ${seconds.toFixed(1)} s; ${deletedAt.size} documents deleted; ${problems.length} problems`,
  );
  expect(problems.slice(0, 5)).toEqual([]);
  expect(updates).toBeGreaterThan(DOCS);
  expect(searches).toBeGreaterThan(30);

  // afterwards: each document is found by the words of the version it holds only, the deleted ones by nothing
  const now = await s.services.documents.documents(null, { ids: Array.from({ length: DOCS }, (_, i) => `d${i}`) });
  for (const [i, d] of now.entries()) {
    const found = async (q: string) =>
      (
        await s.services.search.searchDocuments('reader', { query: q, sort: 'ID_ASC', first: 100, offset: 0 })
      ).hits.some((h) => h.id === `d${i}`);
    expect(d === null, `d${i}`).toBe(deletable(i));
    if (!d) {
      expect(await found(`doc${i}`), `d${i}`).toBe(false);
      continue;
    }
    const v = Number(/v(\d+)/.exec(d.title)![1]);
    expect(await found(`doc${i} tag${v}`), d.id).toBe(true);
    expect(await found(`doc${i} ${v % 2 ? 'orchard' : 'grove'}`), d.id).toBe(false);
  }
  // and every shard's document frequencies, vocabulary and length sum agree with its postings and documents
  for (let n = 0; n < s.config.search.shards; n++) {
    const k = keysOf(s.config.keyPrefix).shard(n);
    const df = await s.redis.hgetall(k.df);
    const vocabulary = await s.redis.zrange(k.vocabulary, '0', '-1');
    expect(vocabulary.sort()).toEqual(Object.keys(df).sort());
    for (const [word, count] of Object.entries(df)) expect(await s.redis.zcard(k.word(word)), word).toBe(Number(count));
    const lengths = Object.values(await s.redis.hgetall(k.lengths)).map(Number);
    expect(Number((await s.redis.get(k.lengthSum)) ?? 0)).toBe(lengths.reduce((a, b) => a + b, 0));
    expect(await s.redis.zcard(k.updated)).toBe(lengths.length);
  }
});
