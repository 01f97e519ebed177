/**
 * Rate limits, held across gateway processes (two apps on one key prefix): failed sign-ins per address and
 * username, sign-ups per address, and operations per user or anonymous address, refused with BUSY and retryAfter.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import {
  startTestApp,
  uniqueName,
  uniquePrefix,
  wsRequest,
  type GraphQLResponse,
  type TestApp,
} from '../support/app.js';

const SIGN_IN = 'mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { token } }';
const SIGN_UP = 'mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }';
const code = (r: Omit<GraphQLResponse, 'status' | 'text'>) => r.errors?.[0]?.extensions?.code;

function expectBusy(r: Omit<GraphQLResponse, 'status' | 'text'>): void {
  expect(code(r)).toBe('BUSY');
  const retryAfter = r.errors?.[0]?.extensions?.retryAfter as number;
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
}

/** Two gateways sharing one Redis and key prefix, with these limits. */
async function gateways(limits: Record<string, string>): Promise<[TestApp, TestApp]> {
  const env = { KEY_PREFIX: uniquePrefix(), ...limits };
  const pair = [await startTestApp(env), await startTestApp(env)] as [TestApp, TestApp];
  return pair;
}

describe('sign-in failures', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    [a, b] = await gateways({ SIGNIN_FAILURES_PER_MINUTE: '3' });
  });

  it('refuses a fourth failure a minute for one username from one address, across processes, even with the right password', async () => {
    const { username } = await a.signUp(undefined, 'right-password');
    expect(code(await a.gql(SIGN_IN, { u: username, p: 'wrong-1' }))).toBe('UNAUTHENTICATED');
    expect(code(await b.gql(SIGN_IN, { u: username, p: 'wrong-2' }))).toBe('UNAUTHENTICATED');
    // A success is no failure.
    expect((await a.gql(SIGN_IN, { u: username, p: 'right-password' })).data?.signIn).toBeTruthy();
    expect(code(await b.gql(SIGN_IN, { u: username, p: 'wrong-3' }))).toBe('UNAUTHENTICATED');
    expectBusy(await a.gql(SIGN_IN, { u: username, p: 'wrong-4' }));
    expectBusy(await b.gql(SIGN_IN, { u: username, p: 'right-password' }));
    // Another username from the same address is not held back.
    const other = await a.signUp(undefined, 'right-password');
    expect((await b.gql(SIGN_IN, { u: other.username, p: 'right-password' })).data?.signIn).toBeTruthy();
  });

  it('counts concurrent guesses too', async () => {
    const { username } = await a.signUp();
    const guesses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => [a, b][i % 2]!.gql(SIGN_IN, { u: username, p: `guess-${i}` })),
    );
    expect(guesses.filter((r) => code(r) === 'UNAUTHENTICATED')).toHaveLength(3);
    expect(guesses.filter((r) => code(r) === 'BUSY')).toHaveLength(7);
  });
});

describe('sign-ups', () => {
  it('allows SIGNUPS_PER_MINUTE per address across processes, then BUSY with nothing written', async () => {
    const [a, b] = await gateways({ SIGNUPS_PER_MINUTE: '3' });
    for (const app of [a, b, a]) await app.signUp();
    const name = uniqueName('late');
    expectBusy(await b.gql(SIGN_UP, { u: name, p: 'password123' }));
    expect(await b.redis.exists(keysOf(b.config.keyPrefix).userProfile(name))).toBe(0);
  });
});

describe('operations', () => {
  it('runs at most RATE_LIMIT_PER_MINUTE operations of one user a minute across processes and transports', async () => {
    const [a, b] = await gateways({ RATE_LIMIT_PER_MINUTE: '1000' }); // quota taken in batches of 10
    const { token } = await a.signUp();
    const ws = b.wsClient(token);
    let served = 0;
    let refused = 0;
    for (let i = 0; i < 120; i++) {
      const results = await Promise.all([
        ...Array.from({ length: 5 }, () => a.gql('{ me { username } }', {}, token)),
        ...Array.from({ length: 4 }, () => b.gql('{ me { username } }', {}, token)),
        wsRequest(ws, '{ me { username } }'),
      ]);
      for (const r of results) {
        if (r.errors) {
          expectBusy(r);
          refused++;
        } else served++;
      }
    }
    console.log(`RATE_LIMIT_PER_MINUTE 1000 over two processes: ${served} served, ${refused} refused of 1200`);
    // (The signUp was anonymous: the address's.) At most a batch per process goes unused.
    expect(served).toBeLessThanOrEqual(1000);
    expect(served).toBeGreaterThanOrEqual(1000 - 10);
    // Another user is not held back; nor is an anonymous caller, limited by address.
    expect((await a.gql('{ me { username } }', {}, (await b.signUp()).token)).errors).toBeUndefined();
    expect((await b.gql('{ maintenance }')).errors).toBeUndefined();
  });

  it('limits anonymous callers by address', async () => {
    const [a] = await gateways({ RATE_LIMIT_PER_MINUTE: '20' });
    const results = await Promise.all(Array.from({ length: 30 }, () => a.gql('{ maintenance }')));
    expect(results.filter((r) => !r.errors)).toHaveLength(20);
    for (const r of results.filter((r) => r.errors)) expectBusy(r);
  });
});
