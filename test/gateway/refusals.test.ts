/**
 * An operation over its rate limit is refused before its document is parsed (plugins/limits.ts): the answer is the
 * one an executed refusal gave (BUSY, retryAfter, status, media type, request id), and it is counted as an operation;
 * a persisted query named by its hash alone is refused when it would execute.
 * /readyz is answered beside yoga (gateway/http.ts).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { scrape } from '../support/prometheus.js';
import { startTestApp, wsRequest } from '../support/app.js';
import { eventually } from '../support/clients.js';

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function answer(res: Response) {
  const json = (await res.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: { code?: string; retryAfter?: number } }[];
  };
  return { status: res.status, type: res.headers.get('content-type'), id: res.headers.get('x-request-id'), json };
}

describe('an operation over its rate limit', () => {
  it('is refused with BUSY before its document is parsed, answered as a refusal at execution was', async () => {
    const t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
    const { token } = await t.signUp(); // anonymous: the address's quota, not the user's
    const auth = { authorization: `Bearer ${token}` };
    // The user's two operations.
    const served = await answer(await post(t.url, { query: '{ me { id } }' }, auth));
    expect(served.json.errors).toBeUndefined();
    expect((await answer(await post(t.url, { query: '{ __typename }' }, auth))).json.errors).toBeUndefined();

    // A document that would not even parse gets BUSY: nothing of it was read.
    const early = await answer(await post(t.url, { query: '{ me { id ' }, { ...auth, 'x-request-id': 'refused-1' }));
    expect(early.json.errors).toHaveLength(1);
    expect(early.json.errors![0]!.extensions?.code).toBe('BUSY');
    const retryAfter = early.json.errors![0]!.extensions!.retryAfter!;
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(early.json.errors![0]!.message).toBe(`too many operations; retry in ${retryAfter} s`);
    expect(early.json.data).toBeUndefined();
    expect([early.status, early.type, early.id]).toEqual([served.status, served.type, 'refused-1']);

    // A valid one too, and the same user over WebSocket (checked at execution): the same answer.
    const valid = await answer(await post(t.url, { query: '{ me { id } }' }, auth));
    expect(valid.json.errors?.[0]?.extensions?.code).toBe('BUSY');
    const ws = await wsRequest(t.wsClient(token), '{ me { id } }');
    expect(ws.errors?.[0]?.extensions?.code).toBe('BUSY');

    // Counted as operations refused by the limit, under the name the request gave, not as bad requests.
    await post(t.url, { query: 'query Named { me { id } }', operationName: 'Named' }, auth);
    const m = await scrape(t.url.replace('/graphql', '/metrics'));
    expect(m.value('gateway_rate_limit_refusals_total', { limit: 'operations' })).toBe(4);
    expect(m.value('gateway_operation_errors_total', { operation: 'anonymous', code: 'BUSY' })).toBe(3);
    expect(m.value('gateway_operation_errors_total', { operation: 'Named', code: 'BUSY' })).toBe(1);
    expect(m.value('gateway_requests_refused_total', { code: 'BUSY' })).toBeUndefined();
  });

  it("is one user's or one address's: another user still runs, an unknown token counts as the address", async () => {
    const t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
    const a = await t.signUp(); // the address's first two operations
    const b = await t.signUp();
    for (let i = 0; i < 2; i++) expect((await t.gql('{ me { id } }', {}, a.token)).errors).toBeUndefined();
    expect((await t.gql('{ me { id } }', {}, a.token)).errors?.[0]?.extensions?.code).toBe('BUSY');
    const r = await t.gql<{ me: { id: string } }>('{ me { id } }', {}, b.token);
    expect([r.errors, r.data?.me.id]).toEqual([undefined, b.username]);
    expect((await t.gql('{ me { id } }', {}, 'x'.repeat(43))).errors?.[0]?.extensions?.code).toBe('BUSY');
  });
});

describe('refusals in a row', () => {
  it('are one error while the seconds to wait are the same, and say those seconds', async () => {
    const t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1' });
    const limits = t.app.services.limits;
    const who = 'user:refused-in-a-row';
    expect(await limits.operation({ who })).toBeUndefined(); // the minute's one operation
    const first = await limits.operation({ who });
    const refusals = [first, ...Array.from({ length: 200 }, () => limits.operation({ who }))];
    const bySeconds = new Map<unknown, Set<unknown>>();
    for (const r of refusals) {
      expect(r).toBeInstanceOf(AppError);
      const { retryAfter } = (r as AppError).extensions;
      expect((r as AppError).message).toBe(`too many operations; retry in ${String(retryAfter)} s`);
      bySeconds.set(retryAfter, (bySeconds.get(retryAfter) ?? new Set()).add(r));
    }
    // 201 refusals within at most a second or two: one error per second to wait.
    expect(bySeconds.size).toBeLessThanOrEqual(3);
    for (const errors of bySeconds.values()) expect(errors.size).toBe(1);
    // Another caller's refusal is its own.
    expect(await limits.operation({ who: 'user:another' })).toBeUndefined();
    expect(await limits.operation({ who: 'user:another' })).not.toBe(first);
  });
});

describe('a refusal past the rate limit, by media type', () => {
  const GRAPHQL_RESPONSE = { accept: 'application/graphql-response+json' };
  const JSON_ONLY = { accept: 'application/json' };

  it('answers 429 with Retry-After its retryAfter as application/graphql-response+json, 200 without as application/json', async () => {
    const t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
    const query = '{ me { id } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    // The address's two operations: one registers the persisted query.
    expect((await answer(await post(t.url, { query, extensions }))).json.errors).toBeUndefined();
    expect((await answer(await post(t.url, { query: '{ __typename }' }))).json.errors).toBeUndefined();
    const refusals = {
      // Refused before parsing.
      early: (headers: Record<string, string>) => post(t.url, { query }, headers),
      // Refused when it would execute.
      byHash: (headers: Record<string, string>) => post(t.url, { extensions }, headers),
    };
    for (const [name, refuse] of Object.entries(refusals)) {
      const res = await refuse(GRAPHQL_RESPONSE);
      const spec = await answer(res);
      expect([name, spec.status, spec.type]).toEqual([name, 429, 'application/graphql-response+json; charset=utf-8']);
      const retryAfter = spec.json.errors![0]!.extensions!.retryAfter!;
      expect(spec.json.errors![0]!.extensions!.code).toBe('BUSY');
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(res.headers.get('retry-after')).toBe(String(retryAfter));

      const plainRes = await refuse(JSON_ONLY);
      const plain = await answer(plainRes);
      expect([name, plain.status, plain.type]).toEqual([name, 200, 'application/json; charset=utf-8']);
      expect(plain.json.errors![0]!.extensions!.code).toBe('BUSY');
      expect(plainRes.headers.get('retry-after')).toBeNull();
    }
  });
});

describe('an operation refused as application/graphql-response+json', () => {
  it('keeps 200 when it ran (data, even null), 400 for an invalid document, 406 for a subscription without a stream', async () => {
    const t = await startTestApp();
    const accept = { accept: 'application/graphql-response+json' };
    const ran = await answer(await post(t.url, { query: '{ chats { id } }' }, accept));
    expect([ran.status, ran.json.errors?.[0]?.extensions?.code, ran.json.data]).toEqual([200, 'UNAUTHENTICATED', null]);
    const invalid = await answer(await post(t.url, { query: '{ nope }' }, accept));
    expect([invalid.status, invalid.json.errors?.[0]?.extensions?.code]).toEqual([400, 'BAD_USER_INPUT']);
    // A status of the error's own is kept: a subscription asked for without a stream format, signed in or not.
    const { token } = await t.signUp();
    for (const auth of [{}, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const stream = await answer(
        await post(t.url, { query: 'subscription { messageAdded { id } }' }, { ...accept, ...auth }),
      );
      expect([stream.status, stream.json.errors?.[0]?.extensions?.code]).toEqual([406, 'BAD_USER_INPUT']);
    }
  });
});

describe('a persisted query named by its hash alone, over its rate limit', () => {
  it('is refused with BUSY when it would execute, once its document is found', async () => {
    const t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
    const { token } = await t.signUp();
    const auth = { authorization: `Bearer ${token}` };
    const query = '{ me { id } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const registered = await answer(await post(t.url, { query, extensions }, auth));
    expect(registered.json.errors).toBeUndefined();
    expect((await answer(await post(t.url, { extensions }, auth))).json.errors).toBeUndefined();
    const refused = await answer(await post(t.url, { extensions }, auth));
    expect(refused.json.errors?.[0]?.extensions?.code).toBe('BUSY');
    expect([refused.status, refused.type]).toEqual([registered.status, registered.type]);
    // An unknown hash is still told so (no quota is taken before its document is found).
    const unknown = { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } };
    const missing = await answer(await post(t.url, { extensions: unknown }, auth));
    expect(missing.json.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('/readyz', () => {
  it('answers 200 while Redis answers, with or without a query string, beside GraphQL', async () => {
    const t = await startTestApp();
    const base = t.url.replace('/graphql', '');
    // Ready once its client has connected.
    expect(await eventually(async () => (await fetch(`${base}/readyz`)).status === 200)).toBe(true);
    for (const path of ['/readyz', '/readyz?probe=1']) {
      const res = await fetch(`${base}${path}`);
      expect([res.status, await res.text(), res.headers.get('x-request-id')?.length]).toEqual([200, '', 36]);
    }
    expect((await fetch(`${base}/readyzz`)).status).toBe(404);
    expect((await t.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
  });
});
