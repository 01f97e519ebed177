/**
 * Real text: a sixth of the SpamAssassin corpus (about 1,000 mails) indexed through the service. Counts are
 * checked against the corpus itself, and RELEVANCE against two independent BM25s over the same tokens: a small
 * reference written here from docs/api.md's formula (scores must agree to 1e-9), and MiniSearch (top 10 must agree for
 * at least 90 % of 200 queries). MiniSearch counts a field's length as its distinct tokens where docs/api.md counts
 * every token, so it is given one distinct raw token per occurrence, which its processTerm folds back to the word.
 */
import MiniSearch from 'minisearch';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/services/documents/query.js';
import { termFrequencies, wordsOf } from '../../src/services/documents/text.js';
import { loadCorpus, type CorpusDocument } from '../support/corpus.js';
import { startTestServices, type TestServices } from '../support/services.js';

const K1 = 1.2;
const B = 0.75;
let s: TestServices;
let corpus: CorpusDocument[];

/** The reference: documents' weighted term frequencies and lengths, straight from docs/api.md. */
class ReferenceBm25 {
  readonly tf = new Map<string, Map<string, number>>();
  readonly length = new Map<string, number>();
  private lengthSum = 0;

  constructor(docs: CorpusDocument[], titleWeight: number) {
    for (const d of docs) {
      const { frequencies, length } = termFrequencies({ title: d.title, content: d.content, titleWeight });
      this.length.set(d.id, length);
      this.lengthSum += length;
      for (const [w, n] of frequencies) {
        let postings = this.tf.get(w);
        if (!postings) this.tf.set(w, (postings = new Map<string, number>()));
        postings.set(d.id, n);
      }
    }
  }

  /** Documents having a word of every group (each group: words summed as one), best first, ties by id. */
  search(groups: string[][]): [string, number][] {
    const n = this.length.size;
    const avg = this.lengthSum / n;
    const merged = groups.map((g) => {
      const m = new Map<string, number>();
      for (const w of g) for (const [id, f] of this.tf.get(w) ?? []) m.set(id, (m.get(id) ?? 0) + f);
      return m;
    });
    const out: [string, number][] = [];
    for (const id of merged[0]!.keys()) {
      if (!merged.every((m) => m.has(id))) continue;
      const norm = K1 * (1 - B + (B * this.length.get(id)!) / avg);
      let score = 0;
      for (const m of merged) {
        const df = m.size;
        const tf = m.get(id)!;
        score += Math.log(1 + (n - df + 0.5) / (df + 0.5)) * ((tf * (K1 + 1)) / (tf + norm));
      }
      out.push([id, score]);
    }
    return out.sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  }
}

/** 200 queries of one to three words whose document frequency is 3 to 300, from a fixed seed. */
function queries(reference: ReferenceBm25, count: number): string[] {
  const vocabulary = [...reference.tf]
    .filter(([, p]) => p.size >= 3 && p.size <= 300)
    .map(([w]) => w)
    .sort();
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const out: string[] = [];
  while (out.length < count) {
    const words = Array.from(
      { length: 1 + Math.floor(random() * 3) },
      () => vocabulary[Math.floor(random() * vocabulary.length)]!,
    );
    const q = [...new Set(words)].join(' ');
    if (reference.search(q.split(' ').map((w) => [w])).length > 0) out.push(q);
  }
  return out;
}

async function ranked(query: string, first = 10) {
  return (await s.services.search.searchDocuments('reader', { query, sort: 'RELEVANCE', first, offset: 0 })).hits;
}

beforeAll(async () => {
  s = startTestServices({ SEARCH_CONCURRENCY: '64' });
  corpus = loadCorpus({ every: 6 });
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let d = corpus[next++]; d; d = corpus[next++]) await s.services.documents.indexDocument('writer', d);
    }),
  );
}, 120_000);

describe('a real corpus', () => {
  it('every document is found by its words, and counts are those of the corpus', async () => {
    const reference = new ReferenceBm25(corpus, s.config.search.titleWeight);
    const words = [...reference.tf.keys()].sort().filter((_w, i) => i % 997 === 0);
    expect(words.length).toBeGreaterThan(20);
    for (const w of words) {
      const r = await s.services.search.searchDocuments('reader', { query: w, sort: 'ID_ASC', first: 100, offset: 0 });
      expect(r.totalCount, w).toBe(reference.tf.get(w)!.size);
    }
    const sample = corpus[corpus.length >> 1]!;
    const own = [...new Set(wordsOf(sample.title))].slice(0, 3).join(' ');
    if (own) {
      const r = await s.services.search.searchDocuments('reader', {
        query: own,
        sort: 'ID_ASC',
        first: 100,
        offset: 0,
      });
      expect(r.hits.map((h) => h.id)).toContain(sample.id);
    }
  });

  it('RELEVANCE equals the reference BM25, synonyms and prefixes included', async () => {
    const reference = new ReferenceBm25(corpus, s.config.search.titleWeight);
    const plain = queries(reference, 40);
    const mixed = ['money +cash', 'linux +windows -microsoft', 'mail* free', 'offer +deal click'];
    for (const q of [...plain, ...mixed]) {
      const parsed = parseQuery(q);
      const vocabulary = [...reference.tf.keys()];
      const expand = (t: { word: string; prefix: boolean }) =>
        t.prefix
          ? vocabulary
              .filter((w) => w.startsWith(t.word))
              .sort((a, b) => reference.tf.get(b)!.size - reference.tf.get(a)!.size || (a < b ? -1 : 1))
              .slice(0, s.config.search.prefixMax)
          : [t.word];
      const excluded = new Set(parsed.exclude.flatMap(expand).flatMap((w) => [...(reference.tf.get(w)?.keys() ?? [])]));
      const want = reference
        .search(parsed.groups.map((g) => [...new Set(g.flatMap(expand))]))
        .filter(([id]) => !excluded.has(id))
        .slice(0, 20);
      const got = await ranked(q, 20);
      expect(
        got.map((h) => h.id),
        q,
      ).toEqual(want.map(([id]) => id));
      got.forEach((h, i) => expect(Math.abs(h.score - want[i]![1]), q).toBeLessThan(1e-9 * want[i]![1]));
    }
  });

  it('the top 10 agree with MiniSearch (BM25 k1 1.2, b 0.75) for at least 90 % of 200 queries', async () => {
    const reference = new ReferenceBm25(corpus, s.config.search.titleWeight);
    const text = (d: CorpusDocument) => `${d.title} `.repeat(s.config.search.titleWeight) + d.content;
    const bm25 = { k: K1, b: B, d: 0 };
    const occurrences = new MiniSearch<{ id: string; text: string }>({
      fields: ['text'],
      tokenize: (t) => wordsOf(t).map((w, i) => `${w}\0${i}`),
      processTerm: (t) => t.slice(0, t.indexOf('\0')),
      searchOptions: { combineWith: 'AND', bm25 },
    });
    const distinct = new MiniSearch<{ id: string; text: string }>({
      fields: ['text'],
      tokenize: wordsOf,
      processTerm: (t) => t,
      searchOptions: { combineWith: 'AND', bm25 },
    });
    for (const m of [occurrences, distinct]) m.addAll(corpus.map((d) => ({ id: d.id, text: text(d) })));
    const top10 = (m: MiniSearch, q: string) =>
      m
        .search(q)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, 10)
        .map((r) => r.id as string);
    let agree = 0;
    let agreeDistinct = 0;
    const list = queries(reference, 200);
    for (const q of list) {
      const ours = (await ranked(q)).map((h) => h.id);
      if (ours.join() === top10(occurrences, q).join()) agree++;
      if (ours.join() === top10(distinct, q).join()) agreeDistinct++;
    }
    console.log(
      `relevance on ${corpus.length} SpamAssassin mails: top 10 equal to MiniSearch's for ${agree} of ${list.length} queries (${agreeDistinct} when MiniSearch counts distinct tokens as the length)`,
    );
    expect(agree / list.length).toBeGreaterThanOrEqual(0.9);
  });

  it("a RELEVANCE result's second page, asked with its resultId, is the reference's 11th to 20th and does not move under a change", async () => {
    const reference = new ReferenceBm25(corpus, s.config.search.titleWeight);
    const words = [...reference.tf]
      .filter(([, p]) => p.size >= 30 && p.size <= 300)
      .map(([w]) => w)
      .sort();
    // a synonym group first (its frequency is the intersection's score), another word, an excluded word
    let found: { q: string; want: [string, number][] } | null = null;
    for (let i = 0; !found && i + 3 < words.length; i += 7) {
      const [a, c, b, x] = [words[i]!, words[i + 1]!, words[i + 2]!, words[i + 3]!];
      const excluded = reference.tf.get(x)!;
      const want = reference.search([[a, c], [b]]).filter(([id]) => !excluded.has(id));
      if (want.length >= 25 && want.length < reference.search([[a, c], [b]]).length)
        found = { q: `${a} +${c} ${b} -${x}`, want };
    }
    expect(found).not.toBeNull();
    const { q, want } = found!;
    const page1 = await s.services.search.searchDocuments('pager', {
      query: q,
      sort: 'RELEVANCE',
      first: 10,
      offset: 0,
    });
    expect(page1.totalCount).toBe(want.length);
    // a new document having every word of the query many times would come first in a new search
    const [a, c, b] = q.split(' ').map((w) => w.replace(/^[+-]/, ''));
    await s.services.documents.indexDocument('writer', {
      id: 'zz-newcomer',
      title: `${a} ${c} ${b}`,
      content: `${a} ${c} ${b} `.repeat(20),
    });
    try {
      const page2 = await s.services.search.searchDocuments('pager', {
        query: q,
        sort: 'RELEVANCE',
        first: 10,
        offset: 10,
        resultId: page1.resultId,
      });
      expect(page2.resultId).toBe(page1.resultId);
      expect(page2.hits.map((h) => h.id)).toEqual(want.slice(10, 20).map(([id]) => id));
      page2.hits.forEach((h, i) => expect(Math.abs(h.score - want[10 + i]![1])).toBeLessThan(1e-9 * want[10 + i]![1]));
      const fresh = await s.services.search.searchDocuments('pager', {
        query: q,
        sort: 'RELEVANCE',
        first: 1,
        offset: 0,
      });
      expect(fresh.hits[0]!.id).toBe('zz-newcomer');
    } finally {
      await s.services.documents.deleteDocument('writer', { id: 'zz-newcomer' });
    }
  });
});
