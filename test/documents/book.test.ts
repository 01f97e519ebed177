/**
 * The book's chapter 7 tests (test_index_document, test_set_operations, test_parse_and_search,
 * test_search_with_sort, test_search_with_zsort, test_string_to_score), through GraphQL, and the defects of the
 * book's code that REFERENCE.md lists: result ids are reused, a stop-word query is an error, reindexing drops
 * old words, deleting removes everything.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { stringToScore, tokens, wordsOf } from '../../src/services/documents/text.js';
import { loadCorpus } from '../support/corpus.js';
import { prefixMemory, startTestApp, type TestApp } from '../support/app.js';
import { keysOf } from '../support/keys.js';

const CONTENT = 'this is some random content, look at how it is indexed.';

const INDEX = `mutation($id: ID!, $title: String!, $content: String!) {
  indexDocument(id: $id, title: $title, content: $content) { id title content author { username } votes viewerVoted }
}`;
const SEARCH = `query($q: String!, $sort: DocumentSort, $w: RankWeights, $first: Int, $offset: Int, $rid: ID) {
  searchDocuments(query: $q, sort: $sort, weights: $w, first: $first, offset: $offset, resultId: $rid) {
    resultId totalCount documents { id } hits { score matchedTerms snippet document { id } }
  }
}`;

interface Search {
  resultId: string;
  totalCount: number;
  documents: { id: string }[];
  hits: { score: number; matchedTerms: string[]; snippet: string; document: { id: string } }[];
}

let t: TestApp;
let token: string;

async function index(id: string, content: string, as = token, title = id) {
  return t.gql<{ indexDocument: { id: string; author: { username: string } } }>(INDEX, { id, title, content }, as);
}

async function search(q: string, vars: Record<string, unknown> = {}, as = token) {
  const r = await t.gql<{ searchDocuments: Search }>(SEARCH, { q, ...vars }, as);
  if (!r.data?.searchDocuments) throw new Error(r.text);
  return r.data.searchDocuments;
}

const ids = async (q: string, vars: Record<string, unknown> = {}) => (await search(q, vars)).documents.map((d) => d.id);

beforeAll(async () => {
  t = await startTestApp();
  token = (await t.signUp()).token;
});

describe("the book's chapter 7 tests", () => {
  it('index_document: the content is tokenized into its words, and each finds the document', async () => {
    expect(wordsOf(CONTENT)).toEqual(['random', 'content', 'look', 'indexed']);
    const r = await index('test', CONTENT);
    expect(r.errors).toBeUndefined();
    expect(r.data?.indexDocument.id).toBe('test');
    for (const word of ['random', 'content', 'look', 'indexed', 'RANDOM']) expect(await ids(word)).toEqual(['test']);
  });

  it('parse_and_search: plain words, +synonyms and -exclusions', async () => {
    await index('test', CONTENT);
    expect(await ids('content')).toEqual(['test']);
    expect(await ids('content indexed random')).toEqual(['test']);
    expect(await ids('content +indexed random')).toEqual(['test']);
    expect(await ids('content indexed +random')).toEqual(['test']);
    expect(await ids('content indexed -random')).toEqual([]);
    expect(await ids('content ignored')).toEqual([]);
    expect(await ids('content +ignored')).toEqual(['test']);
    expect(await ids('ignored')).toEqual([]);
  });

  it('search_and_sort: by updated the later document first, by id ascending the other way', async () => {
    await index('test', CONTENT);
    await new Promise((r) => setTimeout(r, 5));
    await index('test2', CONTENT);
    expect(await ids('content', { sort: 'UPDATED_DESC' })).toEqual(['test2', 'test']);
    expect(await ids('content', { sort: 'UPDATED_ASC' })).toEqual(['test', 'test2']);
    expect(await ids('content', { sort: 'ID_ASC' })).toEqual(['test', 'test2']);
    expect(await ids('content', { sort: 'ID_DESC' })).toEqual(['test2', 'test']);
  });

  it('search_and_zsort: ranked by update time, then by votes', async () => {
    await index('test', CONTENT);
    await new Promise((r) => setTimeout(r, 5));
    await index('test2', CONTENT);
    for (let i = 0; i < 2; i++) {
      const voter = (await t.signUp()).token;
      const v = await t.gql('mutation { voteDocument(id: "test") { votes } }', {}, voter);
      expect(v.errors).toBeUndefined();
    }
    expect(await ids('content', { sort: 'RANKED', w: { updated: 1, votes: 0 } })).toEqual(['test2', 'test']);
    expect(await ids('content', { sort: 'RANKED', w: { updated: 0, votes: 1 } })).toEqual(['test', 'test2']);
    expect(await ids('content', { sort: 'VOTES_DESC' })).toEqual(['test', 'test2']);
  });

  it('the tokenizer: words of 2 to 64 letters or digits of any script, folded, apostrophes trimmed, stop words out', () => {
    expect(wordsOf("Don't SHOUT 'quoted' a I x2 at\tthe\r\nend 42 " + 'z'.repeat(65))).toEqual([
      "don't",
      'shout',
      'quoted',
      'x2',
      'end',
      '42',
    ]);
    expect(wordsOf('Ünïcode ΟΔΟΣ café naïve 東京 Straße')).toEqual([
      'ünïcode',
      'οδος',
      'café',
      'naïve',
      '東京',
      'straße',
    ]);
    // an ASCII text is folded at once, any other run by run: both give the words of `tokens` on real mails
    const slow = (text: string) => [...tokens(text)].flatMap((t) => (t.word ? [t.word] : []));
    for (const d of loadCorpus().slice(0, 500)) expect(wordsOf(d.content)).toEqual(slow(d.content));
  });

  it('string_to_score orders as the strings do', () => {
    const words = 'these are some words that will be sorted'.split(' ');
    const byString = [...words].sort();
    const byScore = [...words].sort((a, b) => stringToScore(a) - stringToScore(b));
    expect(byScore).toEqual(byString);
    expect(stringToScore('ab')).toBeLessThan(stringToScore('abc'));
    expect(stringToScore('abcdefg')).toBeGreaterThan(stringToScore('abcdef'));
    expect(stringToScore('é')).toBeGreaterThan(stringToScore('z')); // UTF-8 bytes: code point order
  });
});

describe("the book's defects, fixed", () => {
  it('a query of stop words (or of nothing usable) is BAD_USER_INPUT, not a crash or an empty page', async () => {
    for (const q of ['how', 'this is the', '', '-content', 'a b c', '+ - *']) {
      const r = await t.gql(SEARCH, { q }, token);
      expect(r.errors?.[0]?.extensions?.code, q).toBe('BAD_USER_INPUT');
      expect(r.data, q).toBeNull();
    }
  });

  it('a result id is reused: pages asked with it come from the same result set', async () => {
    await index('test', CONTENT);
    const first = await search('content');
    const again = await search('content', { rid: first.resultId });
    expect(again.resultId).toBe(first.resultId);
    expect(again.documents).toEqual(first.documents);
  });

  it('reindexing drops the words the document no longer has; deleting removes it everywhere', async () => {
    const before = await prefixMemory(t.redis, `${t.config.keyPrefix}docs:`);
    await index('gone', 'alpha bravo charlie');
    await index('gone', 'bravo delta');
    expect(await ids('alpha')).toEqual([]);
    expect(await ids('charlie')).toEqual([]);
    expect(await ids('bravo delta')).toEqual(['gone']);
    const del = await t.gql<{ deleteDocument: boolean }>('mutation { deleteDocument(id: "gone") }', {}, token);
    expect(del.data?.deleteDocument).toBe(true);
    expect(await ids('bravo')).toEqual([]);
    const again = await t.gql<{ deleteDocument: boolean }>('mutation { deleteDocument(id: "gone") }', {}, token);
    expect(again.data?.deleteDocument).toBe(false);
    // nothing of it is left: no posting, vocabulary or frequency of its words, no hash, no sort key entry
    const after = await prefixMemory(t.redis, `${t.config.keyPrefix}docs:`);
    const postings = (keys: string[]) => keys.filter((k) => k.includes(':word:')).sort();
    expect(postings(after.keys)).toEqual(postings(before.keys));
    expect(after.keys.filter((k) => k.endsWith(':gone'))).toEqual([]);
    for (const shard of Array.from({ length: t.config.search.shards }, (_, n) => keysOf(t.config.keyPrefix).shard(n))) {
      for (const word of ['alpha', 'bravo', 'charlie', 'delta']) {
        expect(await t.redis.hget(shard.df, word)).toBeNull();
        expect(await t.redis.zscore(shard.vocabulary, word)).toBeNull();
      }
      for (const sortKey of [shard.updated, shard.votes, shard.titleScores])
        expect(await t.redis.zscore(sortKey, 'gone')).toBeNull();
      expect(await t.redis.hget(shard.titles, 'gone')).toBeNull();
      expect(await t.redis.hget(shard.lengths, 'gone')).toBeNull();
    }
  });
});
