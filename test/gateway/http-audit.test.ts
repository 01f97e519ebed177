/**
 * graphql-http's server audits (the GraphQL-over-HTTP spec's conformance suite) against the gateway on a real port,
 * anonymous and signed in, each audit a test named by its name and id. Every MUST and SHOULD passes; so does every
 * MAY today (25 of graphql-http 1.23), and they are asserted as well, so none can regress unnoticed.
 */
import { serverAudits, type AuditResult } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp();
  token = (await t.signUp()).token;
});

afterAll(() => t.close());

// The audits' list does not depend on the URL; each audit reads it when it runs.
const AUDITS = serverAudits({ url: () => t.url });

describe.each([
  ['anonymous', () => fetch],
  [
    'signed in',
    (): typeof fetch => (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    },
  ],
] as const)('graphql-http server audit, %s', (_who, fetchFn) => {
  const run = async (id: string): Promise<AuditResult> => {
    const audit = serverAudits({ url: () => t.url, fetchFn: fetchFn() }).find((a) => a.id === id)!;
    return audit.fn();
  };
  const because = async (result: AuditResult) =>
    result.status === 'ok'
      ? 'ok'
      : `${result.reason}: ${result.response.status} ${await result.response.clone().text()}`;

  it.each(AUDITS.map((a) => [a.name, a.id]))('%s (%s)', async (_name, id) => {
    expect(await because(await run(id))).toBe('ok');
  });
});
