/**
 * Editing leases through GraphQL over a real HTTP port (API.md "Editing leases"): reentrant by the same user, a
 * CONFLICT naming the holder, a stale lease token refused with nothing written, expiry frees the lease, waits woken
 * by the release, the bounds on seconds, waits and leases per user, and who may take a lease.
 */
import { crc32 } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import { eventually, startTestApp, uniqueName, type TestApp } from '../support/app.js';

const LEASE_FIELDS = 'documentId token fencingToken holder { username } expiresAt depth';
const ACQUIRE = `mutation($id: ID!, $seconds: Int, $wait: Int) {
  acquireDocumentLease(id: $id, seconds: $seconds, waitSeconds: $wait) { ${LEASE_FIELDS} }
}`;
const RENEW = `mutation($id: ID!, $token: ID!, $seconds: Int) {
  renewDocumentLease(id: $id, token: $token, seconds: $seconds) { ${LEASE_FIELDS} }
}`;
const RELEASE = 'mutation($id: ID!, $token: ID!) { releaseDocumentLease(id: $id, token: $token) }';
const LEASE = `query($id: ID!) { documentLease(id: $id) { ${LEASE_FIELDS} } }`;
const INDEX = `mutation($id: ID!, $title: String!, $lease: ID) {
  indexDocument(id: $id, title: $title, content: "words", leaseToken: $lease) { id title }
}`;
const DELETE = 'mutation($id: ID!, $lease: ID) { deleteDocument(id: $id, leaseToken: $lease) }';
const DOC = 'query($id: ID!) { document(id: $id) { title } }';

interface Lease {
  documentId: string;
  token: string;
  fencingToken: string;
  holder: { username: string };
  expiresAt: string;
  depth: number;
}

const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

let t: TestApp;
let alice: { token: string; username: string };
let bob: { token: string; username: string };
let admin: { token: string; username: string };
let carol: { token: string; username: string };

beforeAll(async () => {
  t = await startTestApp({ LEASES_PER_USER_MAX: '3', LEASE_WAITS_PER_USER_MAX: '1' });
  alice = await t.signUp();
  bob = await t.signUp();
  carol = await t.signUp();
  admin = await t.signUp('admin');
});

/** A new document of `author`'s. */
async function newDocument(author = alice.token): Promise<string> {
  const id = uniqueName('doc');
  const r = await t.gql(INDEX, { id, title: 'first' }, author);
  if (!r.data?.indexDocument) throw new Error(r.text);
  return id;
}

async function acquire(token: string, vars: Record<string, unknown>): Promise<Lease> {
  const r = await t.gql<{ acquireDocumentLease: Lease }>(ACQUIRE, vars, token);
  if (!r.data?.acquireDocumentLease) throw new Error(r.text);
  return r.data.acquireDocumentLease;
}

const titleOf = async (id: string) =>
  (await t.gql<{ document: { title: string } | null }>(DOC, { id }, alice.token)).data?.document?.title;

describe('editing leases (reentrant, GraphQL)', () => {
  it('reentrant: the same user gets the same lease back with depth + 1, and it is free once released as many times', async () => {
    const id = await newDocument();
    expect((await t.gql<{ documentLease: Lease | null }>(LEASE, { id }, alice.token)).data?.documentLease).toBeNull();
    const first = await acquire(alice.token, { id, seconds: 60 });
    expect(first).toMatchObject({ documentId: id, depth: 1, holder: { username: alice.username } });
    const second = await acquire(alice.token, { id, seconds: 10 });
    expect(second).toMatchObject({ token: first.token, fencingToken: first.fencingToken, depth: 2 });
    expect(Date.parse(second.expiresAt)).toBeGreaterThan(Date.now() + 30_000); // a re-entry never shortens it
    const seen = (await t.gql<{ documentLease: Lease }>(LEASE, { id }, admin.token)).data?.documentLease;
    expect(seen).toMatchObject({ token: first.token, depth: 2, holder: { username: alice.username } });
    expect((await t.gql(RELEASE, { id, token: first.token }, alice.token)).data?.releaseDocumentLease).toBe(false);
    expect((await t.gql(RELEASE, { id, token: first.token }, alice.token)).data?.releaseDocumentLease).toBe(true);
    expect((await t.gql<{ documentLease: Lease | null }>(LEASE, { id }, alice.token)).data?.documentLease).toBeNull();
    // A release too many: the token is no longer a live lease's.
    expect(codeOf(await t.gql(RELEASE, { id, token: first.token }, alice.token))).toBe('CONFLICT');
  });

  it("reentrant: another user gets CONFLICT naming the holder; a stale fencing token's writes are refused with nothing written", async () => {
    const id = await newDocument();
    const aliceLease = await acquire(alice.token, { id, seconds: 60 });
    const refused = await t.gql(ACQUIRE, { id }, admin.token);
    expect(codeOf(refused)).toBe('CONFLICT');
    expect(refused.errors?.[0]?.message).toContain(alice.username);
    // While it is leased: no token, or a wrong one, writes nothing.
    expect(codeOf(await t.gql(INDEX, { id, title: 'no token' }, alice.token))).toBe('CONFLICT');
    expect(codeOf(await t.gql(INDEX, { id, title: 'wrong', lease: 'not-the-token' }, alice.token))).toBe('CONFLICT');
    expect(codeOf(await t.gql(DELETE, { id }, alice.token))).toBe('CONFLICT');
    expect(await titleOf(id)).toBe('first');
    expect((await t.gql(INDEX, { id, title: 'by alice', lease: aliceLease.token }, alice.token)).data).toBeTruthy();
    expect(await titleOf(id)).toBe('by alice');
    // Alice's lease ends (released here, as after a pause past its end); the admin takes the next one.
    expect((await t.gql(RELEASE, { id, token: aliceLease.token }, alice.token)).data?.releaseDocumentLease).toBe(true);
    const adminLease = await acquire(admin.token, { id, seconds: 60 });
    expect(BigInt(adminLease.fencingToken)).toBeGreaterThan(BigInt(aliceLease.fencingToken));
    // Alice, waking up with her stale token: refused, nothing written, nothing deleted.
    const stale = await t.gql(INDEX, { id, title: 'stale write', lease: aliceLease.token }, alice.token);
    expect(codeOf(stale)).toBe('CONFLICT');
    expect(codeOf(await t.gql(DELETE, { id, lease: aliceLease.token }, alice.token))).toBe('CONFLICT');
    expect(codeOf(await t.gql(RENEW, { id, token: aliceLease.token }, alice.token))).toBe('CONFLICT');
    expect(await titleOf(id)).toBe('by alice');
    // A foreign token (the admin's live one) in alice's renew or release: FORBIDDEN, nothing changed.
    expect(codeOf(await t.gql(RELEASE, { id, token: adminLease.token }, alice.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(RENEW, { id, token: adminLease.token }, alice.token))).toBe('FORBIDDEN');
    const still = (await t.gql<{ documentLease: Lease }>(LEASE, { id }, admin.token)).data?.documentLease;
    expect(still).toMatchObject({ token: adminLease.token, depth: 1 });
    // The holder deletes with its token: the document and its lease go.
    expect((await t.gql(DELETE, { id, lease: adminLease.token }, admin.token)).data?.deleteDocument).toBe(true);
    expect(await titleOf(id)).toBeUndefined();
    expect(codeOf(await t.gql(LEASE, { id }, admin.token))).toBe('NOT_FOUND');
  });

  it('reentrant: a lease that expires frees the document; its token then writes nothing', async () => {
    const id = await newDocument();
    const lease = await acquire(alice.token, { id, seconds: 1 });
    // The same user waits for nothing: waiting is for another user's lease.
    expect(await eventually(async () => (await t.redis.exists(leaseKey(id))) === 0, 5000)).toBe(true);
    expect((await t.gql<{ documentLease: Lease | null }>(LEASE, { id }, alice.token)).data?.documentLease).toBeNull();
    expect(codeOf(await t.gql(INDEX, { id, title: 'late', lease: lease.token }, alice.token))).toBe('CONFLICT');
    expect(await titleOf(id)).toBe('first');
    expect((await t.gql(INDEX, { id, title: 'free' }, alice.token)).data).toBeTruthy(); // free: no token needed
    const next = await acquire(admin.token, { id, seconds: 60 });
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(lease.fencingToken));
    await t.gql(RELEASE, { id, token: next.token }, admin.token);
  });

  it("reentrant: a wait is woken by the holder's release, long before its waitSeconds", async () => {
    const id = await newDocument();
    const held = await acquire(alice.token, { id, seconds: 600 });
    const watched = t.app.services.poller.size.keys;
    // Waits up to 30 s for a lease of 600 s: only the release lets it in before its wait ends.
    const waiting = t.gql<{ acquireDocumentLease: Lease }>(ACQUIRE, { id, seconds: 60, wait: 30 }, admin.token);
    expect(await eventually(() => Promise.resolve(t.app.services.poller.size.keys > watched))).toBe(true);
    expect(await eventually(async () => (await t.redis.get(leaseKey(id)))?.endsWith('+') ?? false)).toBe(true);
    const releasedAt = Date.now();
    expect((await t.gql(RELEASE, { id, token: held.token }, alice.token)).data?.releaseDocumentLease).toBe(true);
    const got = (await waiting).data?.acquireDocumentLease;
    expect(got).toMatchObject({ holder: { username: admin.username }, depth: 1 });
    expect(BigInt(got!.fencingToken)).toBe(BigInt(held.fencingToken) + 1n);
    // The new lease is counted from when it was taken, after the release: not from when the wait began.
    expect(Date.parse(got!.expiresAt)).toBeGreaterThanOrEqual(releasedAt + 59_000);
    await t.gql(RELEASE, { id, token: got!.token }, admin.token);
  });

  it('reentrant: waits sent together pass LEASE_WAITS_PER_USER_MAX once; deleting the document wakes a waiter with NOT_FOUND', async () => {
    const id = await newDocument();
    const held = await acquire(alice.token, { id, seconds: 600 });
    const calls = [0, 1].map((i) => t.gql(ACQUIRE, { id, wait: 30 }, admin.token).then((r) => ({ r, i })));
    // One of the two is over the bound (1 in this file) and answers at once; the other waits.
    const busy = await Promise.race(calls);
    expect(codeOf(busy.r)).toBe('BUSY');
    const waiting = calls[1 - busy.i]!.then(({ r }) => r);
    expect(await eventually(async () => (await t.redis.get(leaseKey(id)))?.endsWith('+') ?? false)).toBe(true);
    // The holder deletes the document with its token: the lease goes with it, and its waiter is rung.
    expect((await t.gql(DELETE, { id, lease: held.token }, alice.token)).data?.deleteDocument).toBe(true);
    expect(codeOf(await waiting)).toBe('NOT_FOUND'); // long before its 30 s: the lease's 600 s would have outlived it
    expect(await t.redis.exists(leaseKey(id))).toBe(0);
  });

  it('reentrant: out-of-range seconds are BAD_USER_INPUT, unknown documents NOT_FOUND, others FORBIDDEN; nothing taken', async () => {
    const id = await newDocument();
    for (const vars of [{ seconds: 0 }, { seconds: 601 }, { wait: -1 }, { wait: 31 }]) {
      expect(codeOf(await t.gql(ACQUIRE, { id, ...vars }, alice.token))).toBe('BAD_USER_INPUT');
    }
    expect(codeOf(await t.gql(ACQUIRE, { id: 'bad id!' }, alice.token))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(ACQUIRE, { id: uniqueName('none') }, alice.token))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(ACQUIRE, { id }, bob.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(LEASE, { id }, bob.token))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(ACQUIRE, { id }))).toBe('UNAUTHENTICATED');
    expect(await t.redis.exists(leaseKey(id))).toBe(0);
    const lease = await acquire(alice.token, { id });
    expect(codeOf(await t.gql(RENEW, { id, token: lease.token, seconds: 0 }, alice.token))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.gql(RENEW, { id, token: 'x'.repeat(65) }, alice.token))).toBe('BAD_USER_INPUT');
    const renewed = (
      await t.gql<{ renewDocumentLease: Lease }>(RENEW, { id, token: lease.token, seconds: 600 }, alice.token)
    ).data?.renewDocumentLease;
    expect(renewed).toMatchObject({ token: lease.token, fencingToken: lease.fencingToken, depth: 1 });
    expect(await t.redis.pttl(leaseKey(id))).toBeGreaterThan(120_000);
    await t.gql(RELEASE, { id, token: lease.token }, alice.token);
  });

  it('reentrant: a user holds at most LEASES_PER_USER_MAX leases and LEASE_WAITS_PER_USER_MAX waits (BUSY past them)', async () => {
    const ids = await Promise.all([1, 2, 3, 4].map(() => newDocument(carol.token)));
    const leases = [];
    for (const id of ids.slice(0, 3)) leases.push(await acquire(carol.token, { id }));
    const fourth = await t.gql(ACQUIRE, { id: ids[3] }, carol.token);
    expect(codeOf(fourth)).toBe('BUSY');
    expect(await t.redis.exists(leaseKey(ids[3]!))).toBe(0);
    // Taking one of them again is no new lease.
    expect((await acquire(carol.token, { id: ids[0] })).depth).toBe(2);
    await t.gql(RELEASE, { id: ids[2], token: leases[2]!.token }, carol.token);
    const taken = await acquire(carol.token, { id: ids[3] }); // a place was freed
    // Waits: the admin waits for one of carol's leases; a second wait at once is BUSY.
    const waiting = t.gql(ACQUIRE, { id: ids[1], wait: 30 }, admin.token);
    expect(await eventually(async () => (await t.redis.get(leaseKey(ids[1]!)))?.endsWith('+') ?? false)).toBe(true);
    expect(codeOf(await t.gql(ACQUIRE, { id: ids[0], wait: 30 }, admin.token))).toBe('BUSY');
    await t.gql(RELEASE, { id: ids[1], token: leases[1]!.token }, carol.token);
    const adminLease = (await waiting).data?.acquireDocumentLease as Lease;
    expect(adminLease.holder.username).toBe(admin.username);
    for (const [id, token] of [
      [ids[0], leases[0]!.token],
      [ids[0], leases[0]!.token],
      [ids[3], taken.token],
    ] as const)
      await t.gql(RELEASE, { id, token }, carol.token);
    await t.gql(RELEASE, { id: ids[1], token: adminLease.token }, admin.token);
  });
});

/** Document `id`'s lease key (its shard as src/services/shared/shards.ts places it). */
function leaseKey(id: string): string {
  return keysOf(t.config.keyPrefix)
    .shard(crc32(id) % t.config.search.shards)
    .lease(id);
}
