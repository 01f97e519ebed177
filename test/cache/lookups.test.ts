/**
 * Where the cache guards lookups (issue 26): `document(id)` and the user lookups of createChat/addChatMember turn
 * away ids that were never created with the Bloom filter, and ids a read found nothing for with a negative entry,
 * without reading the document or the profile (commands counted with recordCalls). Every id is in the filter before
 * its creation, so a crash between the two costs a read, never a wrong refusal.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { domainKeys } from '../../src/redis/domain-keys.js';
import { keyspace } from '../../src/redis/keys.js';
import {
  eventually,
  recordCalls,
  startTestApp,
  uniqueName,
  uniquePrefix,
  type Call,
  type TestApp,
} from '../support/app.js';

let t: TestApp;
let token: string;
const known = Array.from({ length: 20 }, (_, i) => `doc-${i}`);

const INDEX = 'mutation($id: ID!) { indexDocument(id: $id, title: "A title", content: "some words here") { id } }';
const randomIds = (n: number) => Array.from({ length: n }, () => `x${randomBytes(6).toString('hex')}`);

/** document(id) of every id, 25 aliases a request: the ids found. */
async function lookUp(app: TestApp, ids: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < ids.length; i += 25) {
    const chunk = ids.slice(i, i + 25);
    const query = `{ ${chunk.map((id, j) => `d${j}: document(id: "${id}") { id votes }`).join(' ')} }`;
    const r = await app.gql<Record<string, { id: string } | null>>(query, {}, token);
    expect(r.errors).toBeUndefined();
    found.push(...Object.values(r.data!).flatMap((d) => (d ? [d.id] : [])));
  }
  return found;
}

/** Calls of readDocuments (one script call per shard: src/redis/documents/readDocuments.lua). */
const documentReads = (calls: readonly Call[]) =>
  calls.filter((c) => /^eval(sha)?$/.test(c.name) && /docs:\{s\d+\}:doc:/.test(c.args[2] ?? '')).length;
const profileReads = (calls: readonly Call[]) =>
  calls.filter((c) => c.name === 'exists' && /user:\{[^}]+\}:profile$/.test(c.args[0]!)).length;

beforeAll(async () => {
  t = await startTestApp();
  ({ token } = await t.signUp());
  for (const id of known) expect((await t.gql(INDEX, { id }, token)).errors).toBeUndefined();
  await t.app.services.caches.named('documents').filter!.fill();
});

describe('document(id)', () => {
  it('turns away 300 ids that were never created without reading a document; finds the ones that were', async () => {
    const recording = recordCalls(t.redis);
    expect(await lookUp(t, randomIds(300))).toEqual([]);
    const reads = documentReads(recording.stop());
    expect(reads).toBeLessThanOrEqual(3); // at most 1 %
    expect(t.app.services.caches.figures('documents').refusals).toBeGreaterThanOrEqual(297);
    expect((await lookUp(t, known)).sort()).toEqual([...known].sort());
  });

  it('reads a deleted document once, then answers from its negative entry', async () => {
    const id = uniqueName('gone');
    await t.gql(INDEX, { id }, token);
    await t.gql('mutation($id: ID!) { deleteDocument(id: $id) }', { id }, token);
    const recording = recordCalls(t.redis);
    expect(await lookUp(t, [id, id, id])).toEqual([]);
    expect(documentReads(recording.stop())).toBe(1);
  });

  it('adds an id to the filter before creating it: a crash between leaves a read, and the creation shows at once', async () => {
    const id = uniqueName('crash');
    const filter = t.app.services.caches.named('documents').filter!;
    // What a crash after the add and before the creating script leaves: the id in the filter, no document.
    await filter.add({ item: id });
    let recording = recordCalls(t.redis);
    expect(await lookUp(t, [id, id])).toEqual([]);
    expect(documentReads(recording.stop())).toBe(1); // then its negative entry
    // The creation: the filter's add goes before the creating script, and the negative entry goes after it.
    recording = recordCalls(t.redis);
    await t.gql(INDEX, { id }, token);
    const calls = recording.stop();
    const bloom = calls.findIndex((c) => c.args.some((a) => a.endsWith('bloom:{documents}:meta')));
    const created = calls.findIndex((c) => c.args.some((a) => a.endsWith(`:doc:${id}`)) && c.name === 'evalsha');
    const invalidated = calls.findIndex((c) => c.args.some((a) => a.endsWith(`cache:{documents:${id}}`)));
    expect(bloom).toBeGreaterThanOrEqual(0);
    expect(created).toBeGreaterThan(bloom);
    expect(invalidated).toBeGreaterThan(created);
    expect(await lookUp(t, [id])).toEqual([id]);
  });

  it('fills a filter that came after the documents from the index, and refuses nothing that exists', async () => {
    const prefix = uniquePrefix();
    const a = await startTestApp({ KEY_PREFIX: prefix });
    const { token: tk } = await a.signUp();
    const ids = Array.from({ length: 30 }, (_, i) => `old-${i}`);
    for (const id of ids) await a.gql(INDEX, { id }, tk);
    // As if these documents were indexed before the filter existed.
    const { bloomFilter } = domainKeys(keyspace(prefix));
    await Promise.all(Object.values(bloomFilter('documents')).map((key) => a.redis.del(key)));
    const b = await startTestApp({ KEY_PREFIX: prefix });
    const query = `{ ${ids.map((id, j) => `d${j}: document(id: "${id}") { id }`).join(' ')} }`;
    // Not ready: every id passes (the lookup starts the fill)...
    expect(Object.values((await b.gql(query, {}, tk)).data!).filter(Boolean)).toHaveLength(30);
    const filter = b.app.services.caches.named('documents').filter!;
    expect(await eventually(async () => (await filter.info()).ready, 10_000)).toBe(true);
    // ...and once filled, every one of them still does, and unknown ids do not.
    expect(Object.values((await b.gql(query, {}, tk)).data!).filter(Boolean)).toHaveLength(30);
    expect((await filter.existsMany({ items: randomIds(100) })).filter(Boolean).length).toBeLessThanOrEqual(2);
  });

  it('shows a vote cast on another process within a second', async () => {
    const b = await startTestApp({ KEY_PREFIX: t.config.keyPrefix });
    const id = known[0]!;
    const votes = async (app: TestApp) =>
      (await app.gql<{ document: { votes: number } }>('query($id: ID!) { document(id: $id) { votes } }', { id }, token))
        .data!.document.votes;
    const before = await votes(t);
    await b.gql('mutation($id: ID!) { voteDocument(id: $id) { votes } }', { id }, (await b.signUp()).token);
    const voted = performance.now();
    expect(await eventually(async () => (await votes(t)) === before + 1, 1000, 10)).toBe(true);
    expect(performance.now() - voted).toBeLessThan(1000);
  });
});

describe('user lookups', () => {
  const CREATE_CHAT = 'mutation($m: [String!]!) { createChat(members: $m) { id } }';

  it('turns away 100 usernames nobody signed up without reading a profile; finds those that exist', async () => {
    const bob = await t.signUp();
    await t.app.services.caches.named('users').filter!.fill();
    const recording = recordCalls(t.redis);
    for (const name of randomIds(100)) {
      const r = await t.gql(CREATE_CHAT, { m: [name] }, token);
      expect(r.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    expect(profileReads(recording.stop())).toBeLessThanOrEqual(1);
    expect(t.app.services.caches.figures('users').refusals).toBeGreaterThanOrEqual(99);
    expect((await t.gql(CREATE_CHAT, { m: [bob.username] }, token)).errors).toBeUndefined();
  });

  it('finds a user who signed up after their name was looked up (the negative entry goes with the sign-up)', async () => {
    const name = uniqueName('late');
    const filter = t.app.services.caches.named('users').filter!;
    await filter.add({ item: name }); // a false positive, or a crash between the add and the profile
    expect((await t.gql(CREATE_CHAT, { m: [name] }, token)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await t.signUp(name);
    expect((await t.gql(CREATE_CHAT, { m: [name] }, token)).errors).toBeUndefined();
  });
});
