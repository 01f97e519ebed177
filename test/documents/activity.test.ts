/**
 * searchActivity: searches counted deployment-wide as they run (in memory, flushed every METRICS_FLUSH_MS) (per second by sort and query shape, the hour's
 * busiest queries with what they found), for admins only; bounded whatever clients search: 10,000 distinct queries
 * leave at most SEARCH_TOP_KEPT of them (and their result counts) in Redis, a query's text cut to
 * SEARCH_QUERY_TEXT_MAX, and a query searched often stays counted (Space-Saving).
 */
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/services/documents/query.js';
import {
  SEARCH_QUERY_TEXT_MAX,
  SEARCH_TOP_KEPT,
  type BusyQuery,
  type SearchRate,
} from '../../src/services/documents/activity.js';
import { eventually, prefixMemory, startTestApp } from '../support/app.js';
import { startTestServices } from '../support/services.js';

const ACTIVITY = `query($seconds: Int!, $first: Int!) { searchActivity {
  documents rates(seconds: $seconds) { kind from counts } busiestQueries(first: $first) { query searches found }
} }`;
interface Activity {
  documents: number;
  rates: (Omit<SearchRate, 'from'> & { from: string })[];
  busiestQueries: BusyQuery[];
}

describe('searchActivity', () => {
  it('counts the searches that ran by kind, and the busiest queries with what they found, for admins', async () => {
    const t = await startTestApp();
    const admin = (await t.signUp('admin')).token;
    const user = (await t.signUp()).token;
    for (const [id, title, content] of [
      ['d1', 'Red apples', 'apples grow on trees'],
      ['d2', 'Green apples', 'sour apples and pears'],
      ['d3', 'Pears', 'pears grow on trees too'],
    ])
      expect(
        (
          await t.gql(
            `mutation { indexDocument(id: "${id}", title: "${title}", content: "${content}") { id } }`,
            {},
            user,
          )
        ).errors,
      ).toBeUndefined();
    const search = async (query: string, sort = 'UPDATED_DESC') => {
      const r = await t.gql<{ searchDocuments: { totalCount: number; resultId: string } }>(
        'query($q: String!, $s: DocumentSort!) { searchDocuments(query: $q, sort: $s) { totalCount resultId } }',
        { q: query, s: sort },
        user,
      );
      expect(r.errors).toBeUndefined();
      return r.data!.searchDocuments;
    };
    const apples = await search('Apples');
    await search('  APPLES ', 'RELEVANCE');
    await search('apples trees', 'RELEVANCE');
    await search('apples +pears -sour');
    await search('gro*');
    // A page of an earlier result is no new search.
    const paged = await t.gql(
      'query($q: String!, $r: ID!) { searchDocuments(query: $q, resultId: $r, offset: 1) { totalCount } }',
      { q: 'apples', r: apples.resultId },
      user,
    );
    expect(paged.errors).toBeUndefined();

    const refused = await t.gql(ACTIVITY, { seconds: 60, first: 10 }, user);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const read = async () =>
      (await t.gql<{ searchActivity: Activity }>(ACTIVITY, { seconds: 120, first: 10 }, admin)).data!.searchActivity;
    const totals = (a: Activity) =>
      Object.fromEntries(a.rates.map((r) => [r.kind, r.counts.reduce((x, y) => x + y, 0)]));
    // Rates cover whole seconds: the searches' second must have ended.
    const expected = { UPDATED_DESC: 3, RELEVANCE: 2, AND: 1, OR: 1, NOT: 1, PREFIX: 1 };
    expect(await eventually(async () => JSON.stringify(totals(await read())) === JSON.stringify(expected), 5000)).toBe(
      true,
    );
    const activity = await read();
    expect(activity.documents).toBe(3);
    for (const rate of activity.rates) {
      expect(rate.counts).toHaveLength(120);
      expect(Date.parse(rate.from)).toBeLessThanOrEqual(Date.now() - 120_000);
    }
    expect(activity.busiestQueries[0]).toEqual({ query: 'apples', searches: 2, found: 2 });
    expect(activity.busiestQueries.slice(1)).toEqual(
      expect.arrayContaining([
        { query: 'apples trees', searches: 1, found: 1 },
        { query: 'apples +pears -sour', searches: 1, found: 2 },
        { query: 'gro*', searches: 1, found: 2 },
      ]),
    );
    expect(activity.busiestQueries).toHaveLength(4);
    // Bounds of what a client asks.
    const tooMany = await t.gql(ACTIVITY, { seconds: 121, first: 10 }, admin);
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('keeps at most SEARCH_TOP_KEPT queries an hour however many distinct ones run, and the busy ones', async () => {
    const s = startTestServices();
    const activity = s.services.searchActivity;
    const parsed = parseQuery('word');
    const hot = 'a query searched often';
    const long = `long ${'x'.repeat(2 * SEARCH_QUERY_TEXT_MAX)}`;
    // in batches of 100 a flush (as a busy process flushes), the often searched query in each
    for (let i = 0; i < 10_000; i += 100) {
      for (let j = 0; j < 100; j++)
        activity.count({ query: `query number ${i + j}`, parsed, sort: 'RELEVANCE', found: i + j });
      activity.count({ query: hot, parsed, sort: 'RELEVANCE', found: 7 });
      activity.count({ query: long, parsed, sort: 'RELEVANCE', found: 1 });
      await activity.flush();
    }
    const { keys } = await prefixMemory(s.redis, s.config.keyPrefix);
    const queries = keys.filter((k) => k.includes(':queries:'));
    const results = keys.filter((k) => k.includes(':results:'));
    // one hour's, or two when the test ran across an hour's end; the per-minute rates: a few minutes' at most
    expect(queries.length).toBeGreaterThanOrEqual(1);
    expect(queries.length).toBeLessThanOrEqual(2);
    expect(results.length).toBe(queries.length);
    expect(keys.filter((k) => k.includes(':rate:')).length).toBeLessThanOrEqual(3);
    expect(keys.length).toBe(queries.length + results.length + keys.filter((k) => k.includes(':rate:')).length);
    for (const key of queries) {
      expect(await s.redis.zcard(key)).toBeLessThanOrEqual(SEARCH_TOP_KEPT);
      expect(await s.redis.hlen(key.replace(':queries:', ':results:'))).toBe(await s.redis.zcard(key));
      expect(await s.redis.ttl(key)).toBeGreaterThan(0);
    }
    const busiest = await activity.busiest({ first: 3 });
    expect(busiest.map((b) => b.query).sort()).toEqual(
      expect.arrayContaining([hot, long.slice(0, SEARCH_QUERY_TEXT_MAX)].sort()),
    );
    const top = busiest.find((b) => b.query === hot)!;
    expect(top.searches).toBeGreaterThanOrEqual(100);
    expect(top.found).toBe(7);
  });
});
