/**
 * Documents through GraphQL: who may do what, bad input, votes, every sort with its ties, the query language's
 * prefixes, snippets and matched terms, pinned result sets and deep pages, the per-user search semaphore, and the
 * bound on live result sets.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { documentKeys } from '../../src/redis/documents/keys.js';
import { keyspace } from '../../src/redis/keys.js';
import { DEEP_FROM } from '../../src/services/documents/search.js';
import { DOCUMENT_SORTS } from '../../src/services/documents/sorts.js';
import { eventually, prefixMemory, recordCalls, startTestApp, type TestApp } from '../support/app.js';

const INDEX = `mutation($id: ID!, $title: String!, $content: String!) {
  indexDocument(id: $id, title: $title, content: $content) { id title author { username } votes viewerVoted updatedAt }
}`;
const SEARCH = `query($q: String!, $sort: DocumentSort, $w: RankWeights, $first: Int, $offset: Int, $rid: ID) {
  searchDocuments(query: $q, sort: $sort, weights: $w, first: $first, offset: $offset, resultId: $rid) {
    resultId totalCount documents { id } hits { score matchedTerms snippet document { id title } }
  }
}`;

interface Search {
  resultId: string;
  totalCount: number;
  documents: { id: string }[];
  hits: { score: number; matchedTerms: string[]; snippet: string; document: { id: string; title: string } }[];
}

async function index(t: TestApp, token: string, id: string, content: string, title = id) {
  const r = await t.gql<{ indexDocument: { id: string } }>(INDEX, { id, title, content }, token);
  if (!r.data?.indexDocument) throw new Error(r.text);
  return r.data.indexDocument;
}

async function search(t: TestApp, token: string, q: string, vars: Record<string, unknown> = {}): Promise<Search> {
  const r = await t.gql<{ searchDocuments: Search }>(SEARCH, { q, ...vars }, token);
  if (!r.data?.searchDocuments) throw new Error(r.text);
  return r.data.searchDocuments;
}

const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

describe('who may do what', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp();
    alice = (await t.signUp()).token;
    bob = (await t.signUp()).token;
    admin = (await t.signUp('admin')).token;
  });

  it('anonymous callers are UNAUTHENTICATED everywhere', async () => {
    for (const [query, variables] of [
      [INDEX, { id: 'a', title: 'a', content: 'x' }],
      [SEARCH, { q: 'word' }],
      ['{ document(id: "a") { id } }', {}],
      ['mutation { deleteDocument(id: "a") }', {}],
      ['mutation { voteDocument(id: "a") { id } }', {}],
    ] as const) {
      const r = await t.gql(query, variables);
      expect(codeOf(r), query).toBe('UNAUTHENTICATED');
    }
  });

  it("only the author or an admin replaces or deletes; another user's attempt changes nothing", async () => {
    const created = await t.gql<{ indexDocument: { author: { username: string } } }>(
      INDEX,
      { id: 'owned', title: 'Owned', content: 'original words' },
      alice,
    );
    const author = created.data!.indexDocument.author.username;
    const replace = await t.gql(INDEX, { id: 'owned', title: 'Mine now', content: 'hijacked' }, bob);
    expect(codeOf(replace)).toBe('FORBIDDEN');
    expect(codeOf(await t.gql('mutation { deleteDocument(id: "owned") }', {}, bob))).toBe('FORBIDDEN');
    expect((await search(t, bob, 'hijacked')).totalCount).toBe(0);
    expect((await search(t, bob, 'original')).documents).toEqual([{ id: 'owned' }]);

    const byAdmin = await t.gql<{ indexDocument: { author: { username: string }; title: string } }>(
      INDEX,
      { id: 'owned', title: 'Edited', content: 'edited words' },
      admin,
    );
    expect(byAdmin.data?.indexDocument).toMatchObject({ title: 'Edited', author: { username: author } });
    const deleted = await t.gql<{ deleteDocument: boolean }>('mutation { deleteDocument(id: "owned") }', {}, admin);
    expect(deleted.data?.deleteDocument).toBe(true);
    expect((await t.gql('{ document(id: "owned") { id } }', {}, alice)).data).toEqual({ document: null });
  });

  it('votes count once per user; viewerVoted is per viewer; voting for nothing is NOT_FOUND', async () => {
    await index(t, alice, 'voted', 'some words to vote on');
    const vote = 'mutation { voteDocument(id: "voted") { votes viewerVoted } }';
    expect((await t.gql(vote, {}, bob)).data).toEqual({ voteDocument: { votes: 1, viewerVoted: true } });
    expect((await t.gql(vote, {}, bob)).data).toEqual({ voteDocument: { votes: 1, viewerVoted: true } });
    expect((await t.gql(vote, {}, admin)).data).toEqual({ voteDocument: { votes: 2, viewerVoted: true } });
    const seen = await t.gql('{ document(id: "voted") { votes viewerVoted } }', {}, alice);
    expect(seen.data).toEqual({ document: { votes: 2, viewerVoted: false } });
    // replacing keeps the votes
    await index(t, alice, 'voted', 'new words');
    expect((await t.gql('{ document(id: "voted") { votes } }', {}, alice)).data).toEqual({ document: { votes: 2 } });
    expect(codeOf(await t.gql('mutation { voteDocument(id: "nothing") { id } }', {}, bob))).toBe('NOT_FOUND');
  });

  it('bad input is BAD_USER_INPUT and writes nothing', async () => {
    const bad: [string, Record<string, unknown>][] = [
      [INDEX, { id: 'has space', title: 't', content: 'c' }],
      [INDEX, { id: 'x'.repeat(65), title: 't', content: 'c' }],
      [INDEX, { id: 'ok1', title: '   ', content: 'c' }],
      [INDEX, { id: 'ok2', title: 't'.repeat(201), content: 'c' }],
      [INDEX, { id: 'ok3', title: 't', content: 'é'.repeat(t.config.search.documentBytes / 2 + 1) }],
      ['{ document(id: "{braces}") { id } }', {}],
      [SEARCH, { q: 'x'.repeat(1001) }],
      [SEARCH, { q: Array.from({ length: 33 }, (_, i) => `word${i}`).join(' ') }],
      [SEARCH, { q: 'a*' }],
      [SEARCH, { q: 'word', first: 101 }],
      [SEARCH, { q: 'word', first: -1 }],
      [SEARCH, { q: 'word', offset: -1 }],
      [SEARCH, { q: 'word', sort: 'RANKED', w: { updated: 1e7 } }],
    ];
    for (const [query, variables] of bad) {
      const r = await t.gql(query, variables, alice);
      expect(codeOf(r), JSON.stringify(variables).slice(0, 80)).toBe('BAD_USER_INPUT');
    }
    for (const id of ['ok1', 'ok2', 'ok3'])
      expect((await t.gql(`{ document(id: "${id}") { id } }`, {}, alice)).data).toEqual({ document: null });
    // exactly at the limits is fine
    const big = await t.gql(
      INDEX,
      { id: 'big', title: 't'.repeat(200), content: 'é'.repeat(t.config.search.documentBytes / 2) },
      alice,
    );
    expect(big.errors).toBeUndefined();
  });
});

describe('sorts, ties and the query language', () => {
  let t: TestApp;
  let token: string;

  // "b" and "a" tie on everything but their id; "c" has a title sharing its first six bytes with theirs
  const DOCS = [
    ['b', 'shared apple', 'Zebra crossing'],
    ['a', 'shared apple', 'Zebra crossing'],
    ['c', 'shared apple pear', 'Zebra crossinga'],
    ['d', 'shared pear pearl', 'apples'],
  ] as const;

  beforeAll(async () => {
    t = await startTestApp();
    token = (await t.signUp()).token;
    for (const [id, content, title] of DOCS) await index(t, token, id, content, title);
  });

  const order = async (q: string, sort: string, w?: object) =>
    (await search(t, token, q, { sort, w })).documents.map((d) => d.id);

  it('every sort breaks ties by id ascending', async () => {
    expect(await order('shared', 'TITLE_ASC')).toEqual(['d', 'a', 'b', 'c']);
    expect(await order('shared', 'TITLE_DESC')).toEqual(['c', 'a', 'b', 'd']);
    expect(await order('shared', 'VOTES_DESC')).toEqual(['a', 'b', 'c', 'd']);
    expect(await order('shared', 'ID_ASC')).toEqual(['a', 'b', 'c', 'd']);
    expect(await order('shared', 'ID_DESC')).toEqual(['d', 'c', 'b', 'a']);
    expect(await order('shared', 'RANKED', { updated: 0, votes: 0 })).toEqual(['a', 'b', 'c', 'd']);
    expect(await order('apple', 'RELEVANCE')).toEqual(['a', 'b', 'c']);
  });

  it("a shard keeps its matches in the sort's order: a short page is the start of the whole order", async () => {
    // one shard: a page of `first` is what its script kept first, which merging shards would not mend
    const one = await startTestApp({ SEARCH_SHARDS: '1' });
    const u = (await one.signUp()).token;
    for (const [id, content, title] of DOCS) await index(one, u, id, content, title);
    for (const sort of DOCUMENT_SORTS) {
      const ids = async (first?: number) =>
        (await search(one, u, 'shared', { sort, first, w: { votes: 1 } })).documents.map((d) => d.id);
      const whole = await ids();
      expect(whole, sort).toHaveLength(DOCS.length);
      for (let first = 1; first < DOCS.length; first++) expect(await ids(first), sort).toEqual(whole.slice(0, first));
    }
  });

  it('RELEVANCE ranks by BM25: rarer words and shorter documents first', async () => {
    // "pear" is once in c and once in d, which is shorter: d first
    expect(await order('pear', 'RELEVANCE')).toEqual(['d', 'c']);
    const r = await search(t, token, 'pear', { sort: 'RELEVANCE' });
    expect(r.hits[0]!.score).toBeGreaterThan(r.hits[1]!.score);
    expect(r.hits[1]!.score).toBeGreaterThan(0);
  });

  it('word* expands to the indexed words starting with it, the most frequent first, at most SEARCH_PREFIX_MAX', async () => {
    expect(await order('pea*', 'ID_ASC')).toEqual(['c', 'd']);
    expect(await order('appl*', 'ID_ASC')).toEqual(['a', 'b', 'c', 'd']); // "apple" in a, b, c and "apples" in d
    const hit = (await search(t, token, 'appl*', { sort: 'ID_ASC' })).hits;
    expect(hit.find((h) => h.document.id === 'd')!.matchedTerms).toEqual(['apples']);
    expect(hit.find((h) => h.document.id === 'a')!.matchedTerms).toEqual(['apple']);
    expect(await order('shared -pea*', 'ID_ASC')).toEqual(['a', 'b']);
    expect(await order('zz*', 'ID_ASC')).toEqual([]);

    const capped = await startTestApp({ SEARCH_PREFIX_MAX: '1' });
    const u = (await capped.signUp()).token;
    await index(capped, u, 'one', 'pearl');
    await index(capped, u, 'two', 'pear pearl');
    const r = await search(capped, u, 'pea*', { sort: 'ID_ASC' });
    expect(r.documents.map((d) => d.id)).toEqual(['one', 'two']); // only "pearl", in both, is kept
    expect(r.hits.map((h) => h.matchedTerms)).toEqual([['pearl'], ['pearl']]);
  });

  it('case, stop words and punctuation are ignored; a sign covers its chunk', async () => {
    expect(await order('THE Shared, APPLE!', 'ID_ASC')).toEqual(['a', 'b', 'c']);
    expect(await order('shared -apple-pear', 'ID_ASC')).toEqual([]);
    expect(await order('shared -pearl', 'ID_ASC')).toEqual(['a', 'b', 'c']);
  });
});

describe('hits', () => {
  it('snippets: around the first match, matched words marked, the rest escaped, at most 200 characters', async () => {
    const t = await startTestApp();
    const token = (await t.signUp()).token;
    const filler = 'lorem ipsum dolor sit amet '.repeat(20);
    await index(t, token, 'html', `${filler}<b>Tom & Jerry</b>'s cheese "heist" ${filler}`, 'Cartoons');
    const [hit] = (await search(t, token, 'cheese jerry')).hits;
    expect(hit!.matchedTerms).toEqual(['cheese', 'jerry']);
    expect(hit!.snippet).toContain(
      '&lt;b&gt;Tom &amp; <mark>Jerry</mark>&lt;/b&gt;&#39;s <mark>cheese</mark> &quot;heist&quot;',
    );
    const text = hit!.snippet.replace(/<\/?mark>/g, '').replace(/&(lt|gt|amp|quot|#39);/g, '_');
    expect([...text].length).toBeLessThanOrEqual(200);
    expect(hit!.snippet.startsWith('lorem') || hit!.snippet.startsWith('ipsum') || /^\w/.test(hit!.snippet)).toBe(true);
    // a title-only match: the start of the content, nothing marked in it
    const [titled] = (await search(t, token, 'cartoons')).hits;
    expect(titled!.matchedTerms).toEqual(['cartoons']);
    expect(titled!.snippet.startsWith('lorem ipsum')).toBe(true);
    expect(titled!.snippet).not.toContain('<mark>');
    // a word stored decomposed (NFD) matches; a query word found only inside a longer word does not
    await index(t, token, 'nfd', `${filler} the Cafe\u0301 redistributes cheese`, 'Menu');
    const [cafe] = (await search(t, token, 'café +redis')).hits;
    expect(cafe!.matchedTerms).toEqual(['café']);
    expect(cafe!.snippet).toContain('the <mark>Cafe\u0301</mark> redistributes cheese');
  });
});

describe('loading', () => {
  it("reads a document's content only when the operation shows it, through fragments and aliases too", async () => {
    const t = await startTestApp();
    const { token } = await t.signUp();
    const content = `needle ${'hay '.repeat(2000)}`;
    await index(t, token, 'heavy', content);
    // What the gateway asks Redis for the document: readDocuments' `content` flag (ARGV[1]), which alone decides
    // whether the script's HMGET takes the content field (src/redis/documents/readDocuments.lua).
    const calls = recordCalls(t.redis);
    const reads = () =>
      calls.sent.flatMap(({ name, args }) => {
        if (name.toLowerCase() !== 'evalsha' && name.toLowerCase() !== 'eval') return [];
        const keys = args.slice(2, 2 + Number(args[1]));
        return keys.some((k) => k.endsWith(':doc:heavy')) ? [args[2 + keys.length] === '1' ? 'content' : 'lean'] : [];
      });
    const lean = [
      '{ searchDocuments(query: "needle") { documents { id title author { username } } } }',
      '{ document(id: "heavy") { id title votes } }',
      '{ d: document(id: "heavy") { ...Head } } fragment Head on Document { title updatedAt }',
    ];
    for (const op of lean) expect((await t.gql(op, {}, token)).errors, op).toBeUndefined();
    const full: [string, (data: Record<string, unknown>) => unknown][] = [
      ['{ document(id: "heavy") { ...Body } } fragment Body on Document { content }', (d) => d.document],
      ['{ d: document(id: "heavy") { ... on Document { text: content } } }', (d) => d.d],
      [
        '{ searchDocuments(query: "needle") { documents { id ...Body } } } fragment Body on Document { content }',
        (d) => (d.searchDocuments as { documents: unknown[] }).documents[0],
      ],
    ];
    for (const [op, pick] of full) {
      const r = await t.gql<Record<string, unknown>>(op, {}, token);
      expect(r.errors, op).toBeUndefined();
      expect(Object.values(pick(r.data!) as object)).toContain(content);
    }
    calls.stop();
    // one read per operation, in order: the lean ones without the content, the others with it
    expect(reads()).toEqual([...lean.map(() => 'lean'), ...full.map(() => 'content')]);
  });
});

describe('result sets', () => {
  let t: TestApp;
  let token: string;
  const N = 250;

  beforeAll(async () => {
    t = await startTestApp({ SEARCH_RESULT_MAX: '200' });
    token = (await t.signUp()).token;
    for (let i = 0; i < N; i += 25)
      await Promise.all(
        Array.from({ length: 25 }, (_, j) => {
          const n = i + j;
          return index(
            t,
            token,
            `doc${String(n).padStart(3, '0')}`,
            `common ${n % 2 ? 'odd' : 'even'} w${n % 7}`,
            `t${(n * 37) % 101}`,
          );
        }),
      );
  });

  it('pages asked with the resultId do not move under concurrent writes; a deleted document is skipped', async () => {
    const first = await search(t, token, 'common', { sort: 'ID_ASC', first: 10 });
    expect(first.totalCount).toBe(N);
    const page2 = await search(t, token, 'common', { sort: 'ID_ASC', first: 10, offset: 10, rid: first.resultId });
    await index(t, token, 'doc000a', 'common newcomer'); // would come second in a new search
    await t.gql('mutation { deleteDocument(id: "doc012") }', {}, token);
    const again = await search(t, token, 'common', { sort: 'ID_ASC', first: 10, offset: 10, rid: first.resultId });
    expect(again.resultId).toBe(first.resultId);
    expect(again.totalCount).toBe(N);
    expect(again.documents.map((d) => d.id)).toEqual(page2.documents.map((d) => d.id).filter((id) => id !== 'doc012'));
    const fresh = await search(t, token, 'common', { sort: 'ID_ASC', first: 3 });
    expect(fresh.resultId).not.toBe(first.resultId);
    expect(fresh.documents.map((d) => d.id)).toEqual(['doc000', 'doc000a', 'doc001']);
  });

  it('an unknown or foreign resultId is searched again transparently', async () => {
    const r = await search(t, token, 'odd', { sort: 'ID_ASC' });
    for (const rid of ['nope', 'AAAAAAAAAAAAAAAAAAAAAA', r.resultId]) {
      const other = await search(t, token, 'even', { sort: 'ID_ASC', rid });
      expect(other.resultId).not.toBe(rid);
      expect(other.documents[0]!.id).toBe('doc000');
    }
    // the same query with another sort is another result
    const bySort = await search(t, token, 'odd', { sort: 'ID_DESC', rid: r.resultId });
    expect(bySort.resultId).not.toBe(r.resultId);
  });

  it(`deep pages (past ${DEEP_FROM}) equal the shallow merge, in every sort; totalCount counts past SEARCH_RESULT_MAX`, async () => {
    for (const sort of ['ID_DESC', 'TITLE_ASC', 'TITLE_DESC', 'UPDATED_DESC', 'RELEVANCE', 'VOTES_DESC']) {
      const q = 'common +w3';
      const all = await search(t, token, q, { sort, first: 100 });
      expect(all.totalCount).toBeGreaterThan(200);
      const ids = [...all.documents.map((d) => d.id)];
      for (let offset = 100; offset < 220; offset += 100) {
        const page = await search(t, token, q, { sort, first: 100, offset, rid: all.resultId });
        expect(page.resultId).toBe(all.resultId);
        ids.push(...page.documents.map((d) => d.id));
      }
      // a page that straddles DEEP_FROM, and one deep page again (now from the merged copy)
      const straddle = await search(t, token, q, { sort, first: 20, offset: 90, rid: all.resultId });
      expect(
        straddle.documents.map((d) => d.id),
        sort,
      ).toEqual(ids.slice(90, 110));
      const deep = await search(t, token, q, { sort, first: 10, offset: 150, rid: all.resultId });
      expect(
        deep.documents.map((d) => d.id),
        sort,
      ).toEqual(ids.slice(150, 160));
      expect(ids.length, sort).toBe(200); // SEARCH_RESULT_MAX
      expect(new Set(ids).size, sort).toBe(200);
      // a new search asking for a deep page at once gives the same
      const direct = await search(t, token, q, { sort, first: 10, offset: 150 });
      expect(
        direct.documents.map((d) => d.id),
        sort,
      ).toEqual(ids.slice(150, 160));
    }
  });
});

describe('shared matches', () => {
  /** Of results `ids`, how many times each shard made its matches rather than finding them made. */
  async function made(t: TestApp, ids: string[]): Promise<number> {
    const kept = (await prefixMemory(t.redis, `${t.config.keyPrefix}docs:`)).keys.filter((k) =>
      k.endsWith(':result:descriptions'),
    );
    const descriptions = (await Promise.all(kept.map((k) => t.redis.hmget(k, ...ids)))).flatMap((values) =>
      values.filter((v) => v !== null).map((v) => JSON.parse(v) as { made: boolean[] }),
    );
    expect(descriptions).toHaveLength(ids.length);
    return descriptions.reduce((n, d) => n + d.made.filter(Boolean).length, 0);
  }

  it("identical searches by many users over two processes make each shard's matches once, and agree", async () => {
    const a = await startTestApp();
    const b = await startTestApp({ KEY_PREFIX: a.config.keyPrefix });
    const author = (await a.signUp()).token;
    await Promise.all(Array.from({ length: 40 }, (_, i) => index(a, author, `s${i}`, `shared w${i % 3}`)));
    const users = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).signUp()));
    for (const sort of ['RELEVANCE', 'TITLE_ASC']) {
      const results = await Promise.all(
        users.map((u, i) => search(i % 2 ? a : b, u.token, 'shared w1', { sort, first: 5 })),
      );
      expect(new Set(results.map((r) => r.resultId)).size).toBe(20); // each user's own handle
      expect(results.map((r) => r.totalCount)).toEqual(results.map(() => 13));
      expect(new Set(results.map((r) => JSON.stringify(r.hits))).size).toBe(1);
      expect(
        await made(
          a,
          results.map((r) => r.resultId),
        ),
      ).toBe(a.config.search.shards);
    }
  });

  it("a search names each shard's matches by the version its process saw last, and a shard changed since (by another process) is searched at its new version", async () => {
    const a = await startTestApp();
    const b = await startTestApp({ KEY_PREFIX: a.config.keyPrefix });
    const [alice, bob] = [(await a.signUp()).token, (await b.signUp()).token];
    await Promise.all(['x1', 'x2', 'x3'].map((id) => index(a, alice, id, 'elsewhere')));
    const before = await search(a, alice, 'elsewhere', { sort: 'VOTES_DESC' });
    expect(before.documents.map((d) => d.id)).toEqual(['x1', 'x2', 'x3']);
    await b.gql('mutation { voteDocument(id: "x3") { votes } }', {}, bob);
    await index(b, alice, 'x4', 'elsewhere');
    const after = await search(a, alice, 'elsewhere', { sort: 'VOTES_DESC' });
    expect(after.documents.map((d) => d.id)).toEqual(['x3', 'x1', 'x2', 'x4']);
    expect(after.totalCount).toBe(4);
  });

  it('a change makes the next search compute again: a vote moves a document up at once', async () => {
    const t = await startTestApp();
    const [alice, bob, carol] = [(await t.signUp()).token, (await t.signUp()).token, (await t.signUp()).token];
    await Promise.all(['v1', 'v2', 'v3'].map((id) => index(t, alice, id, 'voted')));
    const before = await search(t, bob, 'voted', { sort: 'VOTES_DESC' });
    expect(before.documents.map((d) => d.id)).toEqual(['v1', 'v2', 'v3']);
    await t.gql('mutation { voteDocument(id: "v3") { votes } }', {}, bob);
    const after = await search(t, carol, 'voted', { sort: 'VOTES_DESC' });
    expect(after.documents.map((d) => d.id)).toEqual(['v3', 'v1', 'v2']);
    // the earlier result's pages do not move
    const pinned = await search(t, bob, 'voted', { sort: 'VOTES_DESC', rid: before.resultId });
    expect(pinned.resultId).toBe(before.resultId);
    expect(pinned.documents.map((d) => d.id)).toEqual(['v1', 'v2', 'v3']);
  });
});

describe('limits', () => {
  it('MAX_DOCUMENT_BYTES defaults to MAX_REQUEST_BYTES when that is smaller; set above it, the start is refused', () => {
    expect(loadConfig({}).search.documentBytes).toBe(256 * 1024);
    expect(loadConfig({ MAX_REQUEST_BYTES: '65536' }).search.documentBytes).toBe(65536);
    expect(loadConfig({ MAX_REQUEST_BYTES: '65536', MAX_DOCUMENT_BYTES: '4096' }).search.documentBytes).toBe(4096);
    expect(() => loadConfig({ MAX_REQUEST_BYTES: '65536', MAX_DOCUMENT_BYTES: '65537' })).toThrow(
      'MAX_REQUEST_BYTES must be at least MAX_DOCUMENT_BYTES',
    );
  });

  it('one user runs at most SEARCH_CONCURRENCY searches at once (BUSY past it, nothing noted); others are not affected', async () => {
    const t = await startTestApp({ SEARCH_CONCURRENCY: '2' });
    const alice = await t.signUp();
    const bob = (await t.signUp()).token;
    await index(t, alice.token, 'x', 'word');
    const { searching, results } = documentKeys(keyspace(t.config.keyPrefix)).searcher(alice.username);
    // two searches of alice running elsewhere (another process), as the search's first step counts them
    const [seconds] = await t.redis.time();
    const until = (Number(seconds) + 60) * 1000;
    await t.redis.zadd(searching, until, 'elsewhere-1', until, 'elsewhere-2');
    for (const rid of [null, 'AAAAAAAAAAAAAAAAAAAAAA'])
      expect(codeOf(await t.gql(SEARCH, { q: 'word', rid }, alice.token))).toBe('BUSY');
    expect(await t.redis.zcard(results)).toBe(0); // a refused search notes no result
    expect((await search(t, bob, 'word')).totalCount).toBe(1);
    await t.redis.zrem(searching, 'elsewhere-2');
    const found = await search(t, alice.token, 'word');
    expect(found.totalCount).toBe(1);
    expect(await t.redis.zrange(results, '0', '-1')).toEqual([found.resultId]);
    // the search gave its place back (sent before its answer, on the app's connection to that slot)
    expect(await t.redis.zrange(searching, '0', '-1')).toEqual(['elsewhere-1']);
  });

  it('the bound holds over two processes: 40 searches of one user at once never hold more than SEARCH_CONCURRENCY places', async () => {
    const a = await startTestApp({ SEARCH_CONCURRENCY: '3' });
    const b = await startTestApp({ KEY_PREFIX: a.config.keyPrefix, SEARCH_CONCURRENCY: '3' });
    const alice = await a.signUp();
    await Promise.all(Array.from({ length: 30 }, (_, i) => index(a, alice.token, `c${i}`, `bounded w${i % 5}`)));
    const { searching } = documentKeys(keyspace(a.config.keyPrefix)).searcher(alice.username);
    let most = 0;
    let flooding = true;
    const sampler = (async () => {
      while (flooding) most = Math.max(most, await b.redis.zcard(searching));
    })();
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).gql<{ searchDocuments: Search }>(
          SEARCH,
          { q: `bounded w${i % 5}`, sort: 'RELEVANCE' },
          alice.token,
        ),
      ),
    );
    flooding = false;
    await sampler;
    expect(most).toBeLessThanOrEqual(3);
    for (const r of replies)
      if (r.errors) expect(codeOf(r)).toBe('BUSY');
      else expect(r.data!.searchDocuments.totalCount).toBe(6);
    expect(replies.some((r) => !r.errors)).toBe(true);
    expect(await eventually(async () => (await a.redis.zcard(searching)) === 0, 5000, 50)).toBe(true);
  });

  it("a page's documents load in one call per shard, whatever the page's size", async () => {
    const t = await startTestApp();
    const token = (await t.signUp()).token;
    await Promise.all(Array.from({ length: 40 }, (_, i) => index(t, token, `p${i}`, `loaded w${i % 2}`)));
    const shards = t.app.services.documents as unknown as { shards: { of(id: string): unknown } };
    // every command the app sends, as its Redis client sends it (the same client the test holds)
    const sent: (string | Buffer | number)[][] = [];
    const client = t.redis as unknown as { sendCommand(c: { name: string; args: never[] }): unknown };
    const send = client.sendCommand.bind(client);
    client.sendCommand = (c) => {
      sent.push([c.name, ...(c.args as (string | Buffer | number)[])]);
      return send(c);
    };
    const page = await t.gql<{ searchDocuments: { documents: { id: string; title: string; votes: number }[] } }>(
      `{ searchDocuments(query: "loaded", sort: ID_ASC, first: 30) {
          documents { id title votes } hits { document { title author { username } } } } }`,
      {},
      token,
    );
    client.sendCommand = send;
    const ids = page.data!.searchDocuments.documents.map((d) => d.id);
    expect(ids).toHaveLength(30);
    const docKey = `${t.config.keyPrefix}docs:`;
    const loads = sent.filter((args) =>
      args.some((a) => typeof a === 'string' && a.startsWith(docKey) && a.includes(':doc:')),
    );
    // one call per shard holding a document of the page: `documents` loads with the content `hits` needs, so the
    // two fields share it
    const holding = new Set(ids.map((id) => shards.shards.of(id))).size;
    expect(loads).toHaveLength(holding);
    expect(loads.every((args) => /^eval/i.test(String(args[0])))).toBe(true);
  });

  it('one user keeps at most SEARCH_RESULTS_PER_USER live result sets: a new one deletes their least recently used', async () => {
    const t = await startTestApp({ SEARCH_RESULTS_PER_USER: '3' });
    const alice = (await t.signUp()).token;
    const bob = (await t.signUp()).token;
    await Promise.all(Array.from({ length: 6 }, (_, i) => index(t, alice, `k${i}`, `kept w${i}`)));
    const bobs = await search(t, bob, 'kept');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await search(t, alice, `kept w${i}`)).resultId);
      if (i === 2) await search(t, alice, 'kept w0', { rid: ids[0] }); // used again: w1 is now the least recent
    }
    const kept = async (q: string, rid: string, as = alice) => (await search(t, as, q, { rid })).resultId === rid;
    const keys = (await prefixMemory(t.redis, `${t.config.keyPrefix}docs:`)).keys;
    for (const gone of [ids[1]!, ids[2]!]) expect(keys.filter((k) => k.includes(gone))).toEqual([]);
    // the matches the evicted searches made are gone too: those of four queries are left, in every shard
    const totals = keys.filter((k) => /:result:q:[^:]+:\d+:total$/.test(k));
    expect(new Set(totals.map((k) => k.split(':result:q:')[1]!.split(':')[0])).size).toBe(4);
    expect(totals).toHaveLength(4 * t.config.search.shards);
    for (const i of [0, 3, 4]) expect(await kept(`kept w${i}`, ids[i]!), `w${i}`).toBe(true);
    expect(await kept('kept', bobs.resultId, bob)).toBe(true);
    expect(await kept('kept w1', ids[1]!)).toBe(false); // searched again (which makes a new result)
  });

  it("a result in use lives on: deep pages from the merged copy renew every shard's set too", async () => {
    const t = await startTestApp({ SEARCH_RESULT_TTL: '1' });
    const token = (await t.signUp()).token;
    await Promise.all(Array.from({ length: 130 }, (_, i) => index(t, token, `r${i}`, `renewed w${i % 7}`)));
    const first = await search(t, token, 'renewed', { first: 10 });
    await search(t, token, 'renewed', { first: 10, offset: 110, rid: first.resultId }); // makes the merged copy
    // three TTLs of deep pages only; a shallow page then finds the same result
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const deep = await search(t, token, 'renewed', { first: 10, offset: 110, rid: first.resultId });
      expect(deep.resultId).toBe(first.resultId);
    }
    const again = await search(t, token, 'renewed', { first: 10, rid: first.resultId });
    expect(again.resultId).toBe(first.resultId);
    expect(again.documents).toEqual(first.documents);
  });

  it('result sets expire: a flood of distinct queries leaves nothing behind after SEARCH_RESULT_TTL', async () => {
    const t = await startTestApp({ SEARCH_RESULT_TTL: '1', SEARCH_CONCURRENCY: '50' });
    const token = (await t.signUp()).token;
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => index(t, token, `m${i}`, `flood w${i} w${i + 1} w${i + 2}`)),
    );
    const resultKeys = async () =>
      (await prefixMemory(t.redis, `${t.config.keyPrefix}docs:`)).keys.filter((k) => k.includes(':result:'));
    for (let i = 0; i < 300; i += 30)
      await Promise.all(
        Array.from({ length: 30 }, (_, j) =>
          search(t, token, `flood w${(i + j) % 50}`, { first: 1, offset: (i + j) % 3 }),
        ),
      );
    expect((await resultKeys()).length).toBeGreaterThan(0);
    expect(await eventually(async () => (await resultKeys()).length === 0, 5000, 200)).toBe(true);
  });
});
