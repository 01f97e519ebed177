/**
 * `npm run persisted -- list | remove SHA256`: the operator lists the trusted documents admins registered
 * (PERSISTED_ONLY=on) and removes one, which a gateway that ran it stops running once PERSISTED_TRUSTED_RECHECK_MS
 * has passed; a malformed hash, an unknown one and a manifest's are refused with exit 1 and a line saying why.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, redisEnv, startTestApp, uniquePrefix, type TestApp } from '../support/app.js';
import { runEntry } from '../support/gateway-process.js';
import { keysOf } from '../support/keys.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const MANIFEST_DOC = 'query ManifestTypename { __typename }';
const NAMED = 'query Registered { __typename }\nquery RegisteredToo { me { username } }';
const ANONYMOUS = `{
  __typename
  alias: __typename
}`;

function manifestFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'trusted-cli-')), 'persisted-documents.json');
  writeFileSync(file, JSON.stringify({ [sha256(MANIFEST_DOC)]: MANIFEST_DOC }));
  return file;
}

/** One POST: a document by its APQ hash, or sent whole with it (an admin's registers it); its first error's code. */
async function ask(
  t: TestApp,
  { hash, query, operationName, token }: { hash: string; query?: string; operationName?: string; token?: string },
): Promise<{ data?: unknown; code?: unknown }> {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, operationName, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
  });
  const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };
  return { data: body.data, code: body.errors?.[0]?.extensions?.code };
}

/** One operation over graphql-ws by its APQ hash (urql's `enableForSubscriptions` message): its first error's code. */
function wsCode(t: TestApp, hash: string, operationName: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const payload = { query: '', operationName, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } };
    t.wsClient().subscribe(payload, {
      next: (result) => resolve(result.errors?.[0]?.extensions?.code),
      error: (err) =>
        Array.isArray(err)
          ? resolve((err as { extensions?: { code?: unknown } }[])[0]?.extensions?.code)
          : reject(new Error(String(err))),
      complete: () => undefined,
    });
  });
}

describe('npm run persisted', () => {
  it('lists what admins registered, removes one, which a gateway that ran it then refuses; the manifest’s stays', async () => {
    const prefix = uniquePrefix();
    const manifest = manifestFile();
    const settings = { KEY_PREFIX: prefix, PERSISTED_ONLY: 'on', PERSISTED_DOCUMENTS: manifest };
    const [t, open] = await Promise.all([
      startTestApp({ ...settings, PERSISTED_TRUSTED_RECHECK_MS: '200' }),
      startTestApp({ KEY_PREFIX: prefix }),
    ]);
    const persisted = (...args: string[]) =>
      runEntry('src/cli/persisted.ts', args, { ...redisEnv(), ...settings, PERSISTED_TRUSTED_RECHECK_MS: '60000' });

    expect(await persisted('list')).toEqual({
      code: 0,
      stdout: '0 registered documents\n',
      stderr: `not listed: the manifest's documents (1), in ${manifest}\n`,
    });

    const admin = await open.signUp('admin');
    for (const [query, operationName] of [
      [NAMED, 'Registered'],
      [ANONYMOUS, undefined],
    ] as const) {
      const r = await ask(t, { hash: sha256(query), query, operationName, token: admin.token });
      expect(r.code).toBeUndefined();
    }
    const listed = await persisted('list');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines.slice(-2)).toEqual(['2 registered documents', '']);
    expect(lines.slice(0, -2).sort()).toEqual(
      [
        `${sha256(NAMED)} query Registered, query RegisteredToo`,
        `${sha256(ANONYMOUS)} { __typename alias: __typename }`,
      ].sort(),
    );

    // Run by hash once, so this gateway holds it in memory; removed, it is refused there within the recheck, over
    // HTTP and graphql-ws.
    expect(await wsCode(t, sha256(NAMED), 'Registered')).toBeUndefined();
    expect(await ask(t, { hash: sha256(NAMED), operationName: 'Registered' })).toEqual({
      data: { __typename: 'Query' },
      code: undefined,
    });
    expect(await persisted('remove', sha256(NAMED))).toEqual({
      code: 0,
      stdout: `removed ${sha256(NAMED)}\n`,
      stderr: '',
    });
    const refused = await eventually(
      async () =>
        (await ask(t, { hash: sha256(NAMED), operationName: 'Registered' })).code === 'PERSISTED_QUERY_NOT_IN_LIST',
      10_000,
    );
    expect(refused).toBe(true);
    expect(await wsCode(t, sha256(NAMED), 'Registered')).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect((await ask(t, { hash: sha256(ANONYMOUS) })).data).toEqual({ __typename: 'Query', alias: 'Query' });
    expect((await ask(t, { hash: sha256(MANIFEST_DOC) })).data).toEqual({ __typename: 'Query' });
    expect((await persisted('list')).stdout).toBe(
      `${sha256(ANONYMOUS)} { __typename alias: __typename }\n1 registered document\n`,
    );

    // Removed already, malformed, the manifest's, or no hash at all: exit 1 and one line.
    expect(await persisted('remove', sha256(NAMED))).toEqual({
      code: 1,
      stdout: '',
      stderr: `persisted: no registered document ${sha256(NAMED)}\n`,
    });
    for (const malformed of [sha256(NAMED).toUpperCase(), sha256(NAMED).slice(1), 'not-a-hash']) {
      expect(await persisted('remove', malformed)).toEqual({
        code: 1,
        stdout: '',
        stderr: `persisted: SHA256: "${malformed}" is not a SHA-256: 64 lowercase hex digits\n`,
      });
    }
    expect(await persisted('remove', sha256(MANIFEST_DOC))).toEqual({
      code: 1,
      stdout: '',
      stderr: `persisted: ${sha256(MANIFEST_DOC)} is a document of the manifest (PERSISTED_DOCUMENTS): remove it from that file\n`,
    });
    expect((await ask(t, { hash: sha256(MANIFEST_DOC) })).data).toEqual({ __typename: 'Query' });
    for (const args of [['remove'], ['list', sha256(NAMED)], ['nonsense']]) {
      expect(await persisted(...args)).toEqual({
        code: 1,
        stdout: '',
        stderr: 'persisted: usage: npm run persisted -- list | remove SHA256\n',
      });
    }
  });

  it('registers a removed document again through a gateway that still holds it in memory', async () => {
    const prefix = uniquePrefix();
    const [t, open] = await Promise.all([
      startTestApp({ KEY_PREFIX: prefix, PERSISTED_ONLY: 'on', PERSISTED_TRUSTED_RECHECK_MS: '600000' }),
      startTestApp({ KEY_PREFIX: prefix }),
    ]);
    const persisted = (...args: string[]) =>
      runEntry('src/cli/persisted.ts', args, { ...redisEnv(), KEY_PREFIX: prefix });
    const admin = await open.signUp('admin'); // signing up runs a document sent whole: not on `t`
    const hash = sha256(ANONYMOUS);
    expect((await ask(t, { hash, query: ANONYMOUS, token: admin.token })).code).toBeUndefined();
    expect((await ask(t, { hash })).data).toEqual({ __typename: 'Query', alias: 'Query' }); // now held in memory
    expect((await persisted('remove', hash)).code).toBe(0);
    // Sent whole again by the admin through the same gateway: stored in Redis again, not taken as known.
    expect((await ask(t, { hash, query: ANONYMOUS, token: admin.token })).code).toBeUndefined();
    expect((await persisted('list')).stdout).toBe(`${hash} { __typename alias: __typename }\n1 registered document\n`);
  });

  it('lists every registered document once when the hash takes HSCAN several rounds (no manifest: no note)', async () => {
    const t = await startTestApp({ PERSISTED_ONLY: 'on' });
    const documents = Array.from({ length: 300 }, (_, i) => `query Many${i} { __typename }`);
    await t.redis.hset(
      keysOf(t.config.keyPrefix).persistedTrusted(),
      Object.fromEntries(documents.map((d) => [sha256(d), d])),
    );
    const listed = await runEntry('src/cli/persisted.ts', ['list'], { ...redisEnv(), KEY_PREFIX: t.config.keyPrefix });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.split('\n');
    expect(lines.slice(-2)).toEqual(['300 registered documents', '']);
    expect(lines.slice(0, -2).sort()).toEqual(documents.map((d, i) => `${sha256(d)} query Many${i}`).sort());
  });
});
