import { request } from 'node:http';
import { getIntrospectionQuery } from 'graphql';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueName, wsRequest, type GraphQLResponse, type TestApp } from '../support/app.js';

let t: TestApp;
/** What the gateway logged at error level or above (its message, or its error's). */
const errorLines: string[] = [];
beforeAll(async () => {
  const log = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        const l = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } };
        if (l.level >= 50) errorLines.push(l.err?.message ?? l.msg ?? '');
      },
    },
  );
  t = await startTestApp({ MAX_REQUEST_BYTES: '65536' }, log);
});

async function raw(body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(t.url, { method: 'POST', headers, body });
  const text = await res.text();
  return {
    status: res.status,
    text,
    json: (() => {
      try {
        return JSON.parse(text) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
      } catch {
        return undefined;
      }
    })(),
  };
}

describe('malformed requests get a clear error and never crash the gateway', () => {
  it.each([
    ['invalid JSON', '{"query": '],
    ['a JSON array of nonsense', '[1, 2, 3]'],
    ['a query that is not a string', '{"query": 42}'],
    ['no query at all', '{}'],
    ['a syntax error', '{"query": "{ me { id "}'],
    ['an unknown field', '{"query": "{ nope }"}'],
    ['a wrong argument type', '{"query": "{ users(prefix: 1) { id } }"}'],
    ['variables that are not an object', '{"query": "{ me { id } }", "variables": "x"}'],
    [
      'a variable of the wrong type',
      '{"query": "query($n: Int) { users(prefix: \\"a\\", first: $n) { id } }", "variables": {"n": "ten"}}',
    ],
    ['a missing required variable', '{"query": "query($p: String!) { users(prefix: $p) { id } }"}'],
    ['an unknown operation name', '{"query": "query A { me { id } }", "operationName": "B"}'],
    [
      'an Int variable past 2^31',
      '{"query": "query($n: Int) { users(prefix: \\"a\\", first: $n) { id } }", "variables": {"n": 2147483648}}',
    ],
  ])('%s', async (_what, body) => {
    const logged = errorLines.length;
    const r = await raw(body);
    expect(r.status).toBeGreaterThanOrEqual(200);
    expect(r.status).toBeLessThan(500);
    expect(r.json?.errors?.length).toBeGreaterThan(0);
    for (const e of r.json!.errors!) expect(e.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
    expect((await t.gql('{ maintenance }')).data).toEqual({ maintenance: false }); // still serving
    expect(errorLines.slice(logged)).toEqual([]); // expected: nothing for an operator to look at
  });

  it('names the variable whose value its type refuses', async () => {
    const r = await raw(
      '{"query": "query($n: Int) { users(prefix: \\"a\\", first: $n) { id } }", "variables": {"n": "ten"}}',
    );
    expect(r.json?.errors?.[0]?.message).toMatch(/^Variable "\$n" got invalid value "ten"/);
  });

  it.each([
    ['GET', (v: string) => fetch(`${t.url}?query=${encodeURIComponent('{ maintenance }')}&${v}`)],
    [
      'a form',
      (v: string) =>
        fetch(t.url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `query=${encodeURIComponent('{ maintenance }')}&${v}`,
        }),
    ],
  ])('refuses variables or extensions that are not JSON over %s with 400 BAD_USER_INPUT', async (_how, send) => {
    for (const param of ['variables=%7B', 'extensions=%7B']) {
      const logged = errorLines.length;
      const res = await send(param);
      const body = (await res.json()) as { errors?: { message: string; extensions?: { code?: string } }[] };
      expect([res.status, body.errors?.[0]?.extensions?.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(body.errors?.[0]?.message).toMatch(/^variables or extensions: not JSON/);
      expect(errorLines.slice(logged)).toEqual([]);
    }
  });

  it('refuses documents with too many aliases or tokens before executing them', async () => {
    const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: me { id }`).join(' ')} }`;
    expect((await t.gql(aliases)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const tokens = `{ ${Array.from({ length: 1500 }, () => '__typename').join(' ')} }`;
    expect((await t.gql(tokens)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('refuses documents over MAX_QUERY_DEPTH or MAX_QUERY_COST, and still serves introspection to GraphiQL', async () => {
    const cases: { env: Record<string, string>; over: string; reason: RegExp }[] = [
      { env: { MAX_QUERY_DEPTH: '1' }, over: '{ me { id } }', reason: /depth/i },
      {
        env: { MAX_QUERY_COST: '3' },
        over: '{ a: maintenance b: maintenance c: maintenance d: maintenance }',
        reason: /cost/i,
      },
    ];
    for (const { env, over, reason } of cases) {
      const strict = await startTestApp(env);
      expect((await strict.gql('{ maintenance }')).data).toEqual({ maintenance: false });
      const refused = await strict.gql(over);
      expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(refused.errors?.[0]?.message).toMatch(reason);
    }
    const introspection = await t.gql(getIntrospectionQuery());
    expect(introspection.errors).toBeUndefined();
  });

  it('refuses a body over MAX_REQUEST_BYTES with 413, declared or streamed, and writes nothing', async () => {
    const name = uniqueName('huge');
    const big = JSON.stringify({
      query: 'mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }',
      variables: { u: name, p: 'p'.repeat(100_000) },
    });
    const declared = await raw(big);
    expect(declared.status).toBe(413);
    // The same body sent chunked, with no Content-Length, is cut off while streaming.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = request(
        t.url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < big.length; i += 8192) req.write(big.slice(i, i + 8192));
      req.end();
    });
    expect(streamed).toBe(413);
    const users = await t.gql<{ users: unknown[] }>('query($p: String!) { users(prefix: $p) { id } }', { p: name });
    expect(users.data?.users).toEqual([]);
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }, '{ maintenance }'],
    ['XML', { 'content-type': 'application/xml' }, '<query>{ maintenance }</query>'],
    ['no content-type', {}, '{"query": "{ maintenance }"}'],
    ['JSON sent as a form (curl -d)', { 'content-type': 'application/x-www-form-urlencoded' }, '{"query": "{ a }"}'],
  ])('answers a body of %s with 415 and a GraphQL error saying what to send', async (_what, headers, body) => {
    const r = await raw(body, headers);
    expect(r.status).toBe(415);
    expect(r.json?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.json?.errors?.[0]?.message).toMatch(/^content-type:.*send application\/json \(curl: -H 'content-type:/);
  });

  it('serves a query sent as a real form', async () => {
    const r = await raw('query=%7B+maintenance+%7D', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(r.status).toBe(200);
    expect(r.json?.data).toEqual({ maintenance: false });
  });

  it('answers a subscription POSTed with accept: application/json with 406 and an error body, signed in or not', async () => {
    const { token } = await t.signUp();
    const body = JSON.stringify({ query: 'subscription { notificationAdded { id } }' });
    for (const authorization of [`Bearer ${token}`, undefined]) {
      const r = await raw(body, {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(authorization ? { authorization } : {}),
      });
      expect(r.status).toBe(406);
      expect(r.json?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(r.json?.errors?.[0]?.message).toMatch(/^accept:.*text\/event-stream/);
    }
  });

  it('refuses JSON nested 5,000 deep, as a variable or in the document, with BAD_USER_INPUT and writes nothing', async () => {
    const admin = await t.signUp('admin');
    const nested = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
    const mutation = 'mutation($v: JSON!) { setConfig(type: "deep", component: "c", value: $v) }';
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` };
    const variable = await raw(`{"query": ${JSON.stringify(mutation)}, "variables": {"v": ${nested}}}`, headers);
    expect(variable.json?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(variable.json?.errors?.[0]?.message).toMatch(/^value: must nest .* at most 32 deep/);
    const literal = await raw(
      JSON.stringify({ query: `mutation { setConfig(type: "deep", component: "c", value: ${nested}) }` }),
      headers,
    );
    expect(literal.json?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.gql('{ config(type: "deep", component: "c") }', {}, admin.token)).data).toEqual({ config: null });
    // 32 deep is still a configuration.
    const fine = await t.gql(
      mutation,
      { v: JSON.parse(`${'['.repeat(31)}1${']'.repeat(31)}`) as unknown },
      admin.token,
    );
    expect(fine.errors).toBeUndefined();
  });

  it('refuses a mutation over GET', async () => {
    const res = await fetch(`${t.url}?query=${encodeURIComponent('mutation { signOut }')}`, {
      headers: { accept: 'application/json' },
    });
    expect(res.status).toBe(405);
  });
});

describe('malformed operations over WebSocket', () => {
  it.each<[string, string, string?]>([
    ['a syntax error', '{ me { id '],
    ['an unknown field', '{ nope }'],
    ['too many aliases', `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: maintenance`).join(' ')} }`],
    ['two operations and no operationName', 'query A { maintenance } query B { maintenance }'],
    ['an operationName not in the document', 'query A { maintenance }', 'B'],
  ])('%s gets BAD_USER_INPUT and the socket stays usable', async (_what, query, operationName) => {
    const client = t.wsClient();
    const r = await wsRequest(client, query, undefined, operationName);
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await wsRequest(client, '{ maintenance }')).toEqual({ data: { maintenance: false } });
  });
});

describe('when Redis is unreachable', () => {
  it('answers with a masked INTERNAL_SERVER_ERROR, logs the details under the request id, reports not ready, and keeps serving', async () => {
    const lines: { level: number; requestId?: string; msg?: string; err?: { message?: string } }[] = [];
    const log = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
    );
    const dead = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER_NODES: '' }, log);
    // Issued together (each waits out the client's retries). The masked details are logged with the request's
    // id, whether a resolver raised the error or the context did (resolving the token).
    const requests = [
      ['req-resolver', undefined],
      ['req-context', `Bearer ${'t'.repeat(43)}`],
    ] as const;
    const responses = await Promise.all(
      requests.map(([id, authorization]) =>
        fetch(dead.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-request-id': id,
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify({
            query: 'mutation { signIn(username: "someone", password: "password123") { token } }',
          }),
        }),
      ),
    );
    for (const [i, [id]] of requests.entries()) {
      const res = responses[i]!;
      expect(res.headers.get('x-request-id')).toBe(id);
      const body = await res.text();
      expect((JSON.parse(body) as GraphQLResponse).errors?.[0]).toMatchObject({
        message: 'Unexpected error.',
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      });
      expect(body).not.toMatch(/ECONNREFUSED|\.ts:\d+/);
      expect(
        lines
          .filter((l) => l.level >= 50 && l.requestId === id)
          .map((l) => l.err?.message ?? l.msg)
          .join(),
      ).toMatch(/retries|connect|closed/i);
    }
    const base = dead.url.replace('/graphql', '');
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
