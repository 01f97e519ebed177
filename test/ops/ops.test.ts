import { beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  postGraphQL,
  redisEnv,
  startTestApp,
  uniqueName,
  uniquePrefix,
  type TestApp,
} from '../support/app.js';
import { startGateway, type GatewayProcess } from '../support/gateway-process.js';

describe('admin-only operations', () => {
  let t: TestApp;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_USERS: 'root_admin' });
    admin = (await t.signUp('root_admin')).token;
    user = (await t.signUp()).token;
  });

  const ADMIN_OPS = [
    'mutation { setMaintenance(enabled: false) }',
    'mutation { setConfig(type: "search", component: "docs", value: {a: 1}) }',
    '{ config(type: "search", component: "docs") }',
  ];

  it.each(ADMIN_OPS)(
    'refuses %s to a signed-in non-admin (FORBIDDEN) and to anyone else (UNAUTHENTICATED)',
    async (op) => {
      expect((await t.gql(op, {}, user)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect((await t.gql(op)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    },
  );

  it('stores and returns configuration as JSON', async () => {
    const value = { stopWords: ['the', 'a'], ttl: 300, nested: { on: true } };
    const set = await t.gql(
      'mutation($v: JSON!) { setConfig(type: "search", component: "docs", value: $v) }',
      { v: value },
      admin,
    );
    expect(set.data).toEqual({ setConfig: value });
    expect((await t.gql('{ config(type: "search", component: "docs") }', {}, admin)).data).toEqual({ config: value });
    expect((await t.gql('{ config(type: "search", component: "none") }', {}, admin)).data).toEqual({ config: null });
  });

  it('refuses bad configuration names and oversized values with BAD_USER_INPUT and writes nothing', async () => {
    const badName = await t.gql('mutation { setConfig(type: "a b", component: "c", value: 1) }', {}, admin);
    expect(badName.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(badName.errors?.[0]?.message).toMatch(/^type:/);
    const big = await t.gql(
      'mutation($v: JSON!) { setConfig(type: "big", component: "c", value: $v) }',
      { v: 'x'.repeat(70_000) },
      admin,
    );
    expect(big.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.gql('{ config(type: "big", component: "c") }', {}, admin)).data).toEqual({ config: null });
  });
});

describe('maintenance mode across two gateway processes on one Redis', () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  const adminName = uniqueName('admin');
  beforeAll(async () => {
    const env = { ...redisEnv(), KEY_PREFIX: uniquePrefix(), ADMIN_USERS: adminName, LOG_LEVEL: 'info' };
    [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
  });
  const signUpOn = (g: GatewayProcess, name: string) =>
    postGraphQL<{ signUp: { token: string } }>(
      g.url,
      'mutation($u: String!) { signUp(username: $u, password: "password123") { token } }',
      { u: name },
    );

  it('pauses every mutation but signIn and setMaintenance on every instance within about a second', async () => {
    const adminToken = (await signUpOn(a, adminName)).data!.signUp.token;
    const userName = uniqueName('u');
    const userToken = (await signUpOn(b, userName)).data!.signUp.token;
    await postGraphQL(b.url, '{ maintenance }'); // b has now read (and cached) the switch as off

    const on = await postGraphQL(a.url, 'mutation { setMaintenance(enabled: true) }', {}, adminToken);
    expect(on.data).toEqual({ setMaintenance: true });
    // Each instance re-reads the switch at most once a second; allow for a loaded machine.
    const refusedOnB = await eventually(
      async () => (await signUpOn(b, uniqueName('late'))).errors?.[0]?.extensions?.code === 'MAINTENANCE',
      3000,
      20,
    );
    expect(refusedOnB).toBe(true);

    expect((await postGraphQL(b.url, '{ maintenance }')).data).toEqual({ maintenance: true });
    // Reads still work; signIn still works; signOut (a write) waits.
    expect((await postGraphQL(b.url, '{ me { username } }', {}, userToken)).data).toEqual({
      me: { username: userName },
    });
    const signIn = await postGraphQL<{ signIn: { token: string } }>(
      b.url,
      'mutation($u: String!) { signIn(username: $u, password: "password123") { token } }',
      { u: userName },
    );
    expect(signIn.data?.signIn.token).toBeTruthy();
    expect((await postGraphQL(b.url, 'mutation { signOut }', {}, userToken)).errors?.[0]?.extensions?.code).toBe(
      'MAINTENANCE',
    );
    // An operation that mixes an allowed and a paused field is refused whole: nothing is written.
    const mixed = await postGraphQL(b.url, 'mutation { signOut setMaintenance(enabled: false) }', {}, adminToken);
    expect(mixed.errors?.[0]?.extensions?.code).toBe('MAINTENANCE');
    expect((await postGraphQL(a.url, '{ maintenance }')).data).toEqual({ maintenance: true });

    await postGraphQL(b.url, 'mutation { setMaintenance(enabled: false) }', {}, adminToken);
    const acceptedOnA = await eventually(async () => !(await signUpOn(a, uniqueName('back'))).errors, 3000, 20);
    expect(acceptedOnA).toBe(true);
  });
});
