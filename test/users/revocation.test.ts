/**
 * A revoked token stops everywhere at once: its live subscriptions end on every process and transport (WebSocket
 * 4403, SSE with an UNAUTHENTICATED error) through the revocation doorbell, and once signOut returns no process
 * accepts it, however recently that process cached it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { MailboxCommands } from '../../src/redis/mailbox/commands.js';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { keysOf } from '../support/keys.js';
import {
  eventually,
  postGraphQL,
  recordCommands,
  redisEnv,
  sseSubscribe,
  startTestApp,
  type GraphQLResponse,
  uniquePrefix,
  type TestApp,
} from '../support/app.js';
import { MESSAGE_ADDED, createChat, record, send, type Delivered } from '../support/chats.js';
import { startGateway, type GatewayProcess } from '../support/gateway-process.js';

const ME = '{ me { username } }';
const SIGN_OUT = 'mutation { signOut }';
const sessionKey = (prefix: string, token: string) =>
  keysOf(prefix).session(createHash('sha256').update(token).digest('hex'));

/** A live messageAdded stream over HTTP: the texts it delivered, the codes of its errors, whether it ended. */
interface LiveStream {
  ended: boolean;
  texts(): string[];
  codes(): unknown[];
  until(check: () => boolean): Promise<void>;
}

type Results = Omit<GraphQLResponse<{ messageAdded: Delivered }>, 'status' | 'text'>[];
const textsOf = (results: Results) => results.flatMap((r) => (r.data?.messageAdded ? [r.data.messageAdded.text] : []));
const codesOf = (results: Results) => results.flatMap((r) => r.errors?.map((e) => e.extensions?.code) ?? []);

async function sseStream(url: string, token: string, chatId: string): Promise<LiveStream> {
  const sse = await sseSubscribe(url, MESSAGE_ADDED, { c: chatId }, token);
  const results = () => sse.results as Results;
  return {
    get ended() {
      return sse.ended;
    },
    texts: () => textsOf(results()),
    codes: () => codesOf(results()),
    until: (check) => sse.until(check, 5000),
  };
}

/** Apollo's multipart subscription protocol: a payload part's `payload`, or a transport error's `errors`. */
async function multipartStream(url: string, token: string, chatId: string): Promise<LiveStream> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'multipart/mixed;subscriptionSpec="1.0", application/json',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query: MESSAGE_ADDED, variables: { c: chatId } }),
  });
  expect(res.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
  const stream = { ended: false, text: '' };
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) stream.text += chunk.value;
    } catch {
      // cut off (the app closed)
    }
    stream.ended = true;
  })();
  // Each part opens with the boundary; the closing boundary has no body, and the last part may not have fully arrived.
  const results = (): Results =>
    stream.text
      .split('\r\n--graphql')
      .slice(1)
      .flatMap((part) => {
        const body = part.split('\r\n\r\n')[1];
        try {
          const { payload, errors } = JSON.parse(body ?? '{}') as Pick<Results[number], 'errors'> & {
            payload?: Results[number];
          };
          return payload ? [payload] : errors ? [{ errors }] : []; // a heartbeat is {}
        } catch {
          return [];
        }
      });
  return {
    get ended() {
      return stream.ended;
    },
    texts: () => textsOf(results()),
    codes: () => codesOf(results()),
    until: async (check) => expect(await eventually(() => Promise.resolve(check()), 5000)).toBe(true),
  };
}

describe('live subscriptions of a revoked token', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    // A live session is asked of Redis again only when half its idle expiry (7 days) has passed, and the audit is an
    // hour away: only the revocation's doorbell can end these subscriptions.
    const env = { KEY_PREFIX: uniquePrefix(), POLL_AUDIT_MS: '3600000' };
    [a, b] = [await startTestApp(env), await startTestApp(env)];
  });
  it('end on every process and transport when signOut returns: WebSocket with 4403, SSE with UNAUTHENTICATED', async () => {
    const ann = await a.signUp();
    const chatId = await createChat(a, ann.token, [], 'hello');
    const sse = await Promise.all([a, b].map((app) => sseSubscribe(app.url, MESSAGE_ADDED, { c: chatId }, ann.token)));
    const ws = [a, b].map((app) => record(app.wsClient(ann.token), MESSAGE_ADDED, { c: chatId }));
    await Promise.all([
      ...sse.map((s) => s.until(() => s.results.length === 1)),
      ...ws.map((r) => r.until((items) => items.length === 1)),
    ]);

    expect((await a.gql(SIGN_OUT, {}, ann.token)).data).toEqual({ signOut: true });
    // Each process heard the ring before confirming it, and signOut waited for both confirmations.
    for (const s of sse) {
      await s.until(() => s.ended, 3000);
      expect(s.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    for (const r of ws) {
      expect(await eventually(() => Promise.resolve(r.closed !== null), 3000)).toBe(true);
      expect(r.closed).toEqual({ code: 4403 });
    }
  });

  it('end on another process when signOut is retried after a sign-out cut short between the delete and the ring', async () => {
    // Only b resolves the token: a, where signOut runs, holds it in no cache, as the process of a signOut cut short
    // (which forgot it) or any other process once CACHE_MS has passed.
    const ann = await a.signUp();
    const chatId = await createChat(b, ann.token, [], 'hello');
    const sse = await sseSubscribe(b.url, MESSAGE_ADDED, { c: chatId }, ann.token);
    const ws = record(b.wsClient(ann.token), MESSAGE_ADDED, { c: chatId });
    await Promise.all([sse.until(() => sse.results.length === 1), ws.until((items) => items.length === 1)]);

    // The first signOut deleted the session, then failed (or its process died) before ringing the revocation.
    await a.redis.del(sessionKey(a.config.keyPrefix, ann.token));
    // The client's retry finds no session to revoke, and still rings the revocation.
    expect((await a.gql(SIGN_OUT, {}, ann.token)).data).toEqual({ signOut: false });
    await sse.until(() => sse.ended, 3000);
    expect(sse.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await eventually(() => Promise.resolve(ws.closed !== null), 3000)).toBe(true);
    expect(ws.closed).toEqual({ code: 4403 });
  });

  /**
   * The token is resolved when the operation's context is built, its revocation watched only once the stream is first
   * pulled: after the subscribe resolver's Redis reads and the response's start. Here the membership check, one of
   * those reads, waits for a signOut on the other process, whose ring reaches a before any watch is there.
   */
  it.each([
    ['SSE', sseStream],
    ['multipart', multipartStream],
  ])('end over %s when signOut runs while the subscription starts', async (_, subscribe) => {
    const [ann, bob] = [await a.signUp(), await a.signUp()];
    const chatId = await createChat(a, bob.token, [ann.username], 'hello');
    const chats = a.app.services.chats;
    const requireMember = chats.requireMember.bind(chats);
    const unwrap = () => Reflect.deleteProperty(chats, 'requireMember'); // the class's method again
    chats.requireMember = async (user, input) => {
      if (user === ann.username) {
        unwrap();
        expect((await b.gql(SIGN_OUT, {}, ann.token)).data).toEqual({ signOut: true });
        expect((await a.gql(ME, {}, ann.token)).data).toEqual({ me: null });
      }
      return requireMember(user, input);
    };
    let stream: LiveStream;
    try {
      stream = await subscribe(a.url, ann.token, chatId); // the response has started
    } finally {
      unwrap();
    }
    await send(a, bob.token, chatId, 'after the sign-out');
    await stream.until(() => stream.ended || stream.texts().includes('after the sign-out'));
    expect(stream.texts()).not.toContain('after the sign-out');
    expect(stream.ended).toBe(true);
    expect(stream.codes()).toEqual(['UNAUTHENTICATED']);
  });

  it('cost no Redis command while nothing changes, and end once half the idle expiry finds the session gone', async () => {
    // SESSION_TTL's least is 60 s; 30 s here, so that the re-check comes some 10 s (not 25 s) after the subscriptions
    // started, still long after the idle look below.
    const env = { KEY_PREFIX: a.config.keyPrefix };
    const checking = await startTestApp(env, undefined, { sessionTtlSeconds: 30 });
    const bob = await checking.signUp();
    const chatId = await createChat(checking, bob.token, [], 'hi');
    const sse = await sseSubscribe(checking.url, MESSAGE_ADDED, { c: chatId }, bob.token);
    const ws = record(checking.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await Promise.all([sse.until(() => sse.results.length === 1), ws.until((items) => items.length === 1)]);
    const idle = recordCommands(checking.redis);
    await new Promise((r) => setTimeout(r, 3000));
    expect(idle.stop().filter((name) => name === 'getex')).toEqual([]); // no blind re-checks
    await checking.redis.del(sessionKey(env.KEY_PREFIX, bob.token)); // gone without a revocation: expired, say
    // Asked again when half of its 30 s is past (counted from the cache's 5 s before): about 10 s after the
    // subscriptions started.
    await sse.until(() => sse.ended, 25_000);
    expect(sse.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await eventually(() => Promise.resolve(ws.closed !== null), 5000)).toBe(true);
    expect(ws.closed).toEqual({ code: 4403 });
  }, 45_000);

  it("end within an audit period when a revocation's ring was lost", async () => {
    const env = { KEY_PREFIX: a.config.keyPrefix, POLL_AUDIT_MS: '200' };
    const auditing = await startTestApp(env);
    const bob = await auditing.signUp();
    const chatId = await createChat(auditing, bob.token, [], 'hi');
    const sse = await sseSubscribe(auditing.url, MESSAGE_ADDED, { c: chatId }, bob.token);
    const ws = record(auditing.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await Promise.all([sse.until(() => sse.results.length === 1), ws.until((items) => items.length === 1)]);
    // A revocation whose ring never came: the session is gone and the revocations' head moved.
    await auditing.redis.del(sessionKey(env.KEY_PREFIX, bob.token));
    await auditing.redis.incr(keysOf(env.KEY_PREFIX).sessionRevocations().head);
    await sse.until(() => sse.ended, 5000);
    expect(sse.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await eventually(() => Promise.resolve(ws.closed !== null), 5000)).toBe(true);
    expect(ws.closed).toEqual({ code: 4403 });
  });
});

describe('revocation confirmed by every process', () => {
  // Standalone only: it holds back one process's doorbell connection (a Redis client's socket), which a cluster
  // client spreads over one connection per shard.
  it.runIf(inject('redis').kind === 'standalone')(
    'signOut waits until a process that heard the ring late has dropped the token',
    async () => {
      const env = { KEY_PREFIX: uniquePrefix() };
      const [a, b] = [await startTestApp(env), await startTestApp(env)];
      const ann = await a.signUp();
      expect((await b.gql(ME, {}, ann.token)).data).toEqual({ me: { username: ann.username } }); // b caches it
      // b hears rings 300 ms late: its doorbell connection is not read meanwhile.
      const resume = (b.app.services.poller as unknown as { commands: MailboxCommands }).commands.doorbells.hold();
      setTimeout(resume, 300);
      expect((await a.gql(SIGN_OUT, {}, ann.token)).data).toEqual({ signOut: true });
      expect((await b.gql(ME, {}, ann.token)).data).toEqual({ me: null });
    },
  );
});

describe('revocation across gateway processes', () => {
  let t: TestApp;
  let gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    t = await startTestApp();
    const env = { ...redisEnv(), KEY_PREFIX: t.config.keyPrefix, WORKER: 'off', RATE_LIMIT_PER_MINUTE: '0' };
    gateways = await Promise.all([startGateway(env), startGateway(env)]);
  });

  it('refuses the token on the other process as soon as signOut returns: 0 of 1,000 trials', async () => {
    const [a, b] = gateways.map((g) => g.url) as [string, string];
    const trial = async (): Promise<boolean> => {
      const token = randomBytes(32).toString('base64url');
      await t.redis.set(sessionKey(t.config.keyPrefix, token), 'trial', 'EX', 600);
      // b resolves the token and caches it; a revokes it.
      expect((await postGraphQL(b, ME, {}, token)).data).toEqual({ me: { username: 'trial' } });
      expect((await postGraphQL(a, SIGN_OUT, {}, token)).data).toEqual({ signOut: true });
      return (await postGraphQL<{ me: unknown }>(b, ME, {}, token)).data?.me !== null;
    };
    // b is kept busy meanwhile, so that a ring and the next request often wait for it together.
    let trialsDone = false;
    const load = Array.from({ length: 20 }, async () => {
      while (!trialsDone) await postGraphQL(b, '{ __typename }');
    });
    let accepted = 0;
    for (let i = 0; i < 100; i++)
      accepted += (await Promise.all(Array.from({ length: 10 }, trial))).filter(Boolean).length;
    trialsDone = true;
    await Promise.all(load);
    console.log(
      `revocation across two gateway processes: ${accepted} of 1000 trials accepted the token after signOut returned`,
    );
    expect(accepted).toBe(0);
  }, 60_000); // some 5 s on a quiet machine, 20 to 30 s on a loaded one
});
