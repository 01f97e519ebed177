import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CLOSE_FORBIDDEN } from '../../src/gateway/ws.js';
import { keysOf } from '../support/keys.js';
import { scrape } from '../support/prometheus.js';
import {
  eventually,
  recordCommands,
  startTestApp,
  uniqueName,
  wsClient,
  wsRequest,
  type TestApp,
} from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SESSION_TTL: '600' });
});

const SIGN_UP =
  'mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token user { id username } } }';
const SIGN_IN = 'mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { token user { username } } }';
const ME = '{ me { id username } }';
const sessionKey = (token: string) =>
  keysOf(t.config.keyPrefix).session(createHash('sha256').update(token).digest('hex'));

describe('sign up, sign in, sign out', () => {
  it('signs up, answers me with the token and null without it', async () => {
    const name = uniqueName('alice');
    const r = await t.gql<{ signUp: { token: string; user: { id: string; username: string } } }>(SIGN_UP, {
      u: name,
      p: 'password123',
    });
    expect(r.errors).toBeUndefined();
    expect(r.data?.signUp.user).toEqual({ id: name, username: name });
    expect(r.data?.signUp.token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    expect((await t.gql(ME, {}, r.data!.signUp.token)).data).toEqual({ me: { id: name, username: name } });
    const anonymous = await t.gql(ME);
    expect(anonymous.data).toEqual({ me: null });
    expect(anonymous.errors).toBeUndefined();
  });

  it('says a token was refused (UNAUTHENTICATED, what to do) rather than answer as if none was sent', async () => {
    const refused = (r: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }) => ({
      data: r.data,
      code: r.errors?.[0]?.extensions?.code,
      message: r.errors?.[0]?.message,
    });
    const unknown = 'not-a-real-token-but-43-characters-long-xxx';
    expect(refused(await t.gql(ME, {}, unknown))).toEqual({
      data: { me: null },
      code: 'UNAUTHENTICATED',
      message: 'token expired or revoked: sign in again',
    });
    // A mis-pasted token (cut short, or "Bearer" twice) is not one the gateway issues.
    for (const token of ['abc', `Bearer ${unknown}`]) {
      expect(refused(await t.gql(ME, {}, token))).toMatchObject({
        code: 'UNAUTHENTICATED',
        message: expect.stringMatching(/^the Authorization header is not "Bearer <token>"/) as unknown,
      });
    }
    // Fields that need a viewer say the same; public ones still run.
    expect(refused(await t.gql('{ chats { id } }', {}, unknown))).toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'token expired or revoked: sign in again',
    });
    expect((await t.gql(SIGN_UP, { u: uniqueName('fresh'), p: 'password123' }, unknown)).errors).toBeUndefined();
  });

  it('treats usernames case-insensitively: stored in lower case, CONFLICT on any case', async () => {
    const stem = uniqueName('Bob');
    const r = await t.gql<{ signUp: { user: { username: string } } }>(SIGN_UP, { u: stem, p: 'password123' });
    expect(r.data?.signUp.user.username).toBe(stem.toLowerCase());
    const again = await t.gql(SIGN_UP, { u: stem.toUpperCase(), p: 'other-password' });
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const signIn = await t.gql<{ signIn: { user: { username: string } } }>(SIGN_IN, {
      u: stem.toUpperCase(),
      p: 'password123',
    });
    expect(signIn.data?.signIn.user.username).toBe(stem.toLowerCase());
  });

  it.each([
    ['too short', 'ab'],
    ['too long', 'a'.repeat(33)],
    ['a space', 'al ice'],
    ['a non-ASCII letter', 'zoë_1'],
    ['a brace (would change hash slots)', 'a{b}c'],
    ['a very long string', 'x'.repeat(200_000)],
  ])('refuses a username with %s as BAD_USER_INPUT and writes nothing', async (_why, username) => {
    const r = await t.gql(SIGN_UP, { u: username, p: 'password123' });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toMatch(/^username:/);
    expect(r.data).toBeNull();
    expect(await t.redis.exists(keysOf(t.config.keyPrefix).userProfile(username.toLowerCase()))).toBe(0);
  });

  it.each([
    ['too short', 'short'],
    ['too long', 'p'.repeat(129)],
  ])('refuses a password %s as BAD_USER_INPUT and creates no user', async (_why, password) => {
    const name = uniqueName('carol');
    const r = await t.gql(SIGN_UP, { u: name, p: password });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toMatch(/^password:/);
    const users = await t.gql<{ users: unknown[] }>('query($p: String!) { users(prefix: $p) { id } }', { p: name });
    expect(users.data?.users).toEqual([]);
  });

  it('answers a wrong password and an unknown user alike with UNAUTHENTICATED', async () => {
    const { username } = await t.signUp();
    const wrong = await t.gql(SIGN_IN, { u: username, p: 'wrong-password' });
    const unknown = await t.gql(SIGN_IN, { u: uniqueName('nobody'), p: 'password123' });
    expect(wrong.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(unknown.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(wrong.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
  });

  it('stores only a salted scrypt hash of the password', async () => {
    const { username } = await t.signUp(undefined, 'password123');
    const other = await t.signUp(undefined, 'password123');
    const keys = keysOf(t.config.keyPrefix);
    const a = await t.redis.hget(keys.userProfile(username), 'passwordHash');
    const b = await t.redis.hget(keys.userProfile(other.username), 'passwordHash');
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(a).not.toContain('password123');
    expect(a).not.toBe(b);
  });

  it('signOut revokes the token at once; a second signOut answers false', async () => {
    const { token } = await t.signUp();
    expect((await t.gql(ME, {}, token)).data?.me).not.toBeNull();
    expect((await t.gql('mutation { signOut }', {}, token)).data).toEqual({ signOut: true });
    const after = await t.gql(ME, {}, token);
    expect(after.data).toEqual({ me: null });
    expect(after.errors?.[0]?.message).toBe('token expired or revoked: sign in again');
    expect((await t.gql('mutation { signOut }', {}, token)).data).toEqual({ signOut: false });
  });

  it('keeps sessions with an idle expiry that each use pushes back', async () => {
    const { token } = await t.signUp();
    await t.redis.expire(sessionKey(token), 5);
    expect(await t.redis.ttl(sessionKey(token))).toBeLessThanOrEqual(5);
    await t.gql(ME, {}, token);
    expect(await t.redis.ttl(sessionKey(token))).toBeGreaterThan(500);
    // A session that expired before its next use (a cached one cannot: its use pushed the expiry a minute or
    // more past the cache's few seconds).
    const idle = await t.signUp();
    await t.redis.pexpire(sessionKey(idle.token), 1);
    await new Promise((r) => setTimeout(r, 20));
    expect((await t.gql(ME, {}, idle.token)).data).toEqual({ me: null });
  });
});

describe('users(prefix): the directory', () => {
  it('autocompletes case-insensitively, sorted by username, at most `first`', async () => {
    const stem = uniqueName('dir');
    for (const suffix of ['b', 'a', 'c.x', 'c-y', 'd_1']) await t.signUp(`${stem}${suffix}`);
    await t.signUp(uniqueName('other'));
    const r = await t.gql<{ users: { username: string }[] }>(
      'query($p: String!, $n: Int) { users(prefix: $p, first: $n) { username } }',
      {
        p: stem.toUpperCase(),
        n: 10,
      },
    );
    expect(r.data?.users.map((u) => u.username)).toEqual(['a', 'b', 'c-y', 'c.x', 'd_1'].map((s) => stem + s));
    const two = await t.gql<{ users: unknown[] }>('query($p: String!) { users(prefix: $p, first: 2) { id } }', {
      p: stem,
    });
    expect(two.data?.users).toHaveLength(2);
  });

  it('matches nobody for a prefix no username can have, and bounds `first`', async () => {
    expect((await t.gql('{ users(prefix: "]{\\u0000é") { id } }')).data).toEqual({ users: [] });
    const tooMany = await t.gql('{ users(prefix: "a", first: 101) { id } }');
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(tooMany.errors?.[0]?.message).toMatch(/^first:/);
    expect((await t.gql('{ users(prefix: "a", first: -1) { id } }')).errors?.[0]?.extensions?.code).toBe(
      'BAD_USER_INPUT',
    );
  });
});

describe('WebSocket authentication', () => {
  function rawSocket(authorization: unknown): Promise<{ code: number; reason: string }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws');
      socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization } })));
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      socket.once('error', reject);
      setTimeout(() => socket.close(1000, 'test timeout'), 5000);
    });
  }

  it('runs operations as the user of the connection_init token', async () => {
    const { token, username } = await t.signUp();
    const client = t.wsClient(token);
    expect(await wsRequest(client, ME)).toEqual({ data: { me: { id: username, username } } });
    const anonymous = t.wsClient();
    expect(await wsRequest(anonymous, ME)).toEqual({ data: { me: null } });
  });

  it('closes the socket with 4403 for a bad or expired token', async () => {
    expect((await rawSocket('Bearer nonsense')).code).toBe(CLOSE_FORBIDDEN);
    expect((await rawSocket('Bearer aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')).code).toBe(CLOSE_FORBIDDEN);
    expect((await rawSocket(42)).code).toBe(CLOSE_FORBIDDEN);
    const { token } = await t.signUp();
    await t.gql('mutation { signOut }', {}, token);
    expect((await rawSocket(`Bearer ${token}`)).code).toBe(CLOSE_FORBIDDEN);
  });

  it('stops an open socket at its next operation once its token is revoked', async () => {
    const { token } = await t.signUp();
    const closed = new Promise<number>((resolve) => {
      const client = wsClient(t.wsUrl, token, { lazy: false, onNonLazyError: () => undefined }); // one socket for both operations
      client.on('closed', (event) => resolve((event as { code: number }).code));
      void wsRequest(client, ME).then(async (first) => {
        expect(first.data).not.toEqual({ me: null });
        await t.gql('mutation { signOut }', {}, token);
        await wsRequest(client, ME).catch(() => undefined);
      });
    });
    expect(await closed).toBe(CLOSE_FORBIDDEN);
  });

  it('leaves no session watch behind for a socket that closed while its token was looked up', async () => {
    const app = await startTestApp(); // its own: no other socket moves its count of sockets
    const { token, username } = await app.signUp();
    const { sessions } = app.app.services;
    const watched = () => (sessions as unknown as { watchers: Map<string, unknown> }).watchers.size;
    const sockets = async () => (await scrape(app.url.replace(/\/graphql$/, '/metrics'))).value('gateway_websockets');
    const open = async () => {
      const socket = new WebSocket(app.wsUrl, 'graphql-transport-ws');
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
      return socket;
    };
    const before = watched();

    // The token's lookup answers only once the test lets it, after the server has seen the socket close.
    const resolve = sessions.resolve.bind(sessions);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let lookingUp!: () => void;
    const lookedUp = new Promise<void>((r) => (lookingUp = r));
    let answered: Promise<string | null> | undefined;
    const spy = vi.spyOn(sessions, 'resolve').mockImplementation((args) => {
      lookingUp();
      return (answered = released.then(() => resolve(args)));
    });
    const socket = await open();
    await lookedUp;
    socket.close();
    expect(await eventually(async () => (await sockets()) === 0)).toBe(true);
    release();
    expect(await answered).toBe(username);
    await new Promise(setImmediate); // what follows the lookup (microtasks) has run
    spy.mockRestore();
    expect(watched()).toBe(before);

    // An open socket is watched, until it closes: what the count above would have shown.
    const kept = await open();
    await new Promise((resolve) => kept.once('message', resolve)); // connection_ack
    expect(watched()).toBe(before + 1);
    kept.close();
    expect(await eventually(() => Promise.resolve(watched() === before))).toBe(true);
  });
});

describe('sessions cached in each process', () => {
  it('answers a token it resolved without a round trip; a revocation in another process takes effect there at once', async () => {
    const other = await startTestApp({ KEY_PREFIX: t.config.keyPrefix, SESSION_TTL: '600' });
    const { token } = await t.signUp();
    // Once the new process hears revocations (its first read of their doorbell), it answers from its cache.
    const cached = async () => {
      const recording = recordCommands(other.redis);
      const me = (await other.gql(ME, {}, token)).data?.me;
      return me !== null && !recording.stop().includes('getex');
    };
    expect(await eventually(cached, 5000)).toBe(true);
    expect((await t.gql('mutation { signOut }', {}, token)).data).toEqual({ signOut: true });
    expect((await other.gql(ME, {}, token)).data).toEqual({ me: null });
  });

  it('empties its cache when the audit finds the revocations moved without a ring', async () => {
    const other = await startTestApp({
      KEY_PREFIX: t.config.keyPrefix,
      SESSION_TTL: '600',
      POLL_AUDIT_MS: '200',
    });
    const { token } = await t.signUp();
    expect((await other.gql(ME, {}, token)).data?.me).not.toBeNull();
    // A revocation whose ring was lost on its way: the session is gone and the head moved, but no ring came.
    await t.redis.del(sessionKey(token));
    await t.redis.incr(keysOf(t.config.keyPrefix).sessionRevocations().head);
    // Within an audit period, well before the cached entry would expire (5 s).
    expect(await eventually(async () => (await other.gql(ME, {}, token)).data?.me === null, 2000)).toBe(true);
  });
});
