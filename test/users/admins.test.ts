/**
 * Admins are stored grants: made by `npm run admin` on the operator's machine or by another admin, never by
 * signing up a name first; ADMIN_USERS, the development shortcut, is refused in production.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { redisEnv, startTestApp, uniqueName, type TestApp } from '../support/app.js';
import { runEntry, spawnGateway } from '../support/gateway-process.js';
import { createChat, record, send } from '../support/chats.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ ADMIN_USERS: '' });
});

const admin = (...args: string[]) =>
  runEntry('src/cli/admin.ts', args, { ...redisEnv(), KEY_PREFIX: t.config.keyPrefix });
const IS_ADMIN = '{ me { isAdmin } }';
const GRANT = 'mutation($u: String!) { grantAdmin(username: $u) { username isAdmin } }';
const REVOKE = 'mutation($u: String!) { revokeAdmin(username: $u) { username isAdmin } }';
const code = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;

describe('stored admin grants', () => {
  it('makes the first admin from the command line, lists and revokes; names nobody has signed up are refused', async () => {
    const boss = await t.signUp(uniqueName('boss'));
    expect((await t.gql(IS_ADMIN, {}, boss.token)).data).toEqual({ me: { isAdmin: false } });
    expect(code(await t.gql('mutation { setMaintenance(enabled: false) }', {}, boss.token))).toBe('FORBIDDEN');

    const granted = await admin('grant', boss.username.toUpperCase());
    expect(granted).toMatchObject({ code: 0, stdout: `granted admin to ${boss.username}\n` });
    expect((await t.gql(IS_ADMIN, {}, boss.token)).data).toEqual({ me: { isAdmin: true } });
    expect((await t.gql('mutation { setMaintenance(enabled: false) }', {}, boss.token)).data).toEqual({
      setMaintenance: false,
    });
    expect((await admin('list')).stdout).toBe(`${boss.username}\n`);

    // A grant never waits for a name: whoever signs it up later is no admin.
    const ghost = uniqueName('ghost');
    const refused = await admin('grant', ghost);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`admin: user "${ghost}" not found\n`);
    const squatter = await t.signUp(ghost);
    expect((await t.gql(IS_ADMIN, {}, squatter.token)).data).toEqual({ me: { isAdmin: false } });

    // The last grant stays; with a second admin it can go.
    expect(await admin('revoke', boss.username)).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/last admin grant/) as unknown,
    });
    const deputy = await t.signUp(uniqueName('deputy'));
    expect((await admin('grant', deputy.username)).code).toBe(0);
    expect(await admin('revoke', boss.username)).toMatchObject({
      code: 0,
      stdout: `revoked admin of ${boss.username}\n`,
    });
    expect(code(await t.gql('mutation { setMaintenance(enabled: false) }', {}, boss.token))).toBe('FORBIDDEN');
    expect((await admin('nonsense')).stderr).toMatch(
      /^admin: usage: npm run admin -- grant NAME \| revoke NAME \| list/,
    );
  });

  it('lets an admin grant and revoke over GraphQL, at once; strangers are FORBIDDEN; the last admin stays', async () => {
    const [chief, ops, eve] = [
      await t.signUp(uniqueName('chief')),
      await t.signUp(uniqueName('ops')),
      await t.signUp(),
    ];
    await t.redis.del(`${t.config.keyPrefix}users:{admins}`);
    expect((await admin('grant', chief.username)).code).toBe(0);

    expect(code(await t.gql(GRANT, { u: eve.username }, eve.token))).toBe('FORBIDDEN');
    expect(code(await t.gql(GRANT, { u: eve.username }))).toBe('UNAUTHENTICATED');
    expect(code(await t.gql(GRANT, { u: uniqueName('nobody') }, chief.token))).toBe('NOT_FOUND');
    expect(code(await t.gql(GRANT, { u: 'no spaces' }, chief.token))).toBe('BAD_USER_INPUT');

    expect((await t.gql(GRANT, { u: ops.username.toUpperCase() }, chief.token)).data).toEqual({
      grantAdmin: { username: ops.username, isAdmin: true },
    });
    expect((await t.gql('{ queues { name } }', {}, ops.token)).errors).toBeUndefined();
    expect((await t.gql(REVOKE, { u: ops.username }, chief.token)).data).toEqual({
      revokeAdmin: { username: ops.username, isAdmin: false },
    });
    expect(code(await t.gql('{ queues { name } }', {}, ops.token))).toBe('FORBIDDEN');

    const last = await t.gql(REVOKE, { u: chief.username }, chief.token);
    expect(code(last)).toBe('CONFLICT');
    expect((await t.gql(IS_ADMIN, {}, chief.token)).data).toEqual({ me: { isAdmin: true } });
    const users = await t.gql<{ users: { username: string; isAdmin: boolean }[] }>(
      'query($p: String!) { users(prefix: $p) { username isAdmin } }',
      { p: chief.username },
      eve.token,
    );
    expect(users.data?.users).toEqual([{ username: chief.username, isAdmin: true }]);
  });
});

describe('a live subscription', () => {
  it("reads a sender's admin grant as it is when each event is sent, not as its first event read it", async () => {
    const [ann, bob] = [await t.signUp(uniqueName('ann')), await t.signUp(uniqueName('bob'))];
    const chatId = await createChat(t, ann.token, [bob.username]);
    const live = record<{ text: string; sender: { isAdmin: boolean } }>(
      t.wsClient(bob.token),
      'subscription($c: ID) { messageAdded(chatId: $c) { text sender { isAdmin } } }',
      { c: chatId },
    );
    await send(t, ann.token, chatId, 'before');
    await live.until((items) => items.length === 1);
    await t.app.services.admins.grantAdmin({ username: ann.username });
    await send(t, ann.token, chatId, 'after');
    const items = await live.until((got) => got.length === 2);
    expect(items.map((m) => [m.text, m.sender.isAdmin])).toEqual([
      ['before', false],
      ['after', true],
    ]);
    live.stop();
  });
});

describe('ADMIN_USERS, the development shortcut', () => {
  it('makes a listed name admin outside production', async () => {
    const dev = await startTestApp({ ADMIN_USERS: 'root,ops', NODE_ENV: 'development' });
    expect((await dev.gql(IS_ADMIN, {}, (await dev.signUp('OPS')).token)).data).toEqual({ me: { isAdmin: true } });
  });

  it('is refused at start, in one line, with NODE_ENV=production', async () => {
    const child = spawnGateway({ ...redisEnv(), NODE_ENV: 'production', ADMIN_USERS: 'root,ops' });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(exitCode).toBe(1);
    expect(stderr).toMatch(
      /^gateway: ADMIN_USERS is refused with NODE_ENV=production: .*npm run admin -- grant NAME\n$/,
    );
  });
});
