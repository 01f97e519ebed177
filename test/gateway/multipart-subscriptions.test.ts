/**
 * Apollo's multipart HTTP subscriptions: Apollo Client's HttpLink alone (no WebSocket) subscribes, catches up on what
 * it missed, gets refusals with their codes and the end of a revoked session; the protocol's framing (boundary,
 * `payload` parts, heartbeats) as its spec shows it; the metrics gauge counts the stream as `multipart`.
 */
import {
  ApolloClient,
  CombinedGraphQLErrors,
  CombinedProtocolErrors,
  HttpLink,
  InMemoryCache,
  gql,
} from '@apollo/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestApp, type TestApp } from '../support/app.js';
import { MESSAGE_ADDED, createChat, send } from '../support/chats.js';
import { apolloHttpClient } from '../support/frameworks.js';
import { scrape } from '../support/prometheus.js';

interface Recorded {
  texts: string[];
  errors: Error[];
  completed: boolean;
  stop(): void;
}

/** `client.subscribe` on messageAdded, recording what Apollo emits. */
function subscribe(client: ApolloClient, variables: Record<string, unknown>): Recorded {
  const r: Recorded = { texts: [], errors: [], completed: false, stop: () => sub.unsubscribe() };
  const sub = client.subscribe<{ messageAdded: { text: string } }>({ query: gql(MESSAGE_ADDED), variables }).subscribe({
    next: (result) => {
      if (result.data) r.texts.push(result.data.messageAdded.text);
      if (result.error) r.errors.push(result.error);
    },
    error: (err: Error) => r.errors.push(err),
    complete: () => (r.completed = true),
  });
  return r;
}

const holds = (check: () => boolean, timeoutMs?: number) => eventually(() => Promise.resolve(check()), timeoutMs);
/** The codes of the GraphQL errors Apollo emitted (the message of any other error). */
const codes = (r: Recorded) =>
  r.errors.flatMap((e) =>
    CombinedGraphQLErrors.is(e) || CombinedProtocolErrors.is(e) ? e.errors.map((x) => x.extensions?.code) : [e.message],
  );

/**
 * Apollo Client's HttpLink alone (as apolloHttpClient makes it), with `accept` when given in place of its own media
 * types after multipart's, recording the status and media type of each answer it reads.
 */
function recordingApollo(url: string, token?: string, accept?: string) {
  const answers: [number, string | null][] = [];
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (accept) headers.accept = accept;
  const fetchRecording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    answers.push([res.status, res.headers.get('content-type')]);
    return res;
  };
  const client = new ApolloClient({
    link: new HttpLink({ uri: url, headers, fetch: fetchRecording }),
    cache: new InMemoryCache(),
  });
  return { client, answers };
}

const GRAPHQL_RESPONSE = 'application/graphql-response+json; charset=utf-8';

let t: TestApp;
beforeAll(async () => {
  // Heartbeats every 100 ms, so that a test sees some; the audit an hour away, so only the revocation's doorbell ends
  // a revoked session's stream.
  t = await startTestApp({ MULTIPART_HEARTBEAT_MS: '100', POLL_AUDIT_MS: '3600000' });
});

describe("Apollo Client's HttpLink alone", () => {
  it('gets the messages a member missed, then new ones; GET /metrics counts the stream as multipart', async () => {
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'hello');
    await send(t, ann.token, chatId, 'missed');
    const apollo = apolloHttpClient(t.url, bob.token);
    const live = subscribe(apollo, { c: chatId });
    try {
      expect(await holds(() => live.texts.length === 2)).toBe(true);
      await send(t, ann.token, chatId, 'new');
      expect(await holds(() => live.texts.length === 3)).toBe(true);
      expect(live.texts).toEqual(['hello', 'missed', 'new']);
      expect(live.errors).toEqual([]);
      const metrics = await scrape(t.url.replace(/\/graphql$/, '/metrics'));
      expect(metrics.value('gateway_subscriptions', { transport: 'multipart' })).toBe(1);
      expect(metrics.value('gateway_subscriptions', { transport: 'sse' })).toBe(0);
    } finally {
      live.stop();
      apollo.stop();
    }
    const ended = async () =>
      (await scrape(t.url.replace(/\/graphql$/, '/metrics'))).value('gateway_subscriptions', {
        transport: 'multipart',
      }) === 0;
    expect(await eventually(ended)).toBe(true);
  });

  it('gets refusals as GraphQL errors with their codes, answered 401 (no token) and 403 (not a member)', async () => {
    const [ann, eve] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [], 'private');
    const anonymousLink = recordingApollo(t.url);
    const strangerLink = recordingApollo(t.url, eve.token);
    const anonymous = subscribe(anonymousLink.client, { c: chatId });
    const stranger = subscribe(strangerLink.client, { c: chatId });
    expect(await holds(() => anonymous.completed && stranger.completed)).toBe(true);
    expect(codes(anonymous)).toEqual(['UNAUTHENTICATED']);
    expect(codes(stranger)).toEqual(['FORBIDDEN']);
    expect([...anonymous.errors, ...stranger.errors].every((e) => CombinedGraphQLErrors.is(e))).toBe(true);
    expect([...anonymous.texts, ...stranger.texts]).toEqual([]);
    // Apollo asks for application/graphql-response+json after multipart: the spec's 4xx, which Apollo reads.
    expect(anonymousLink.answers).toEqual([[401, GRAPHQL_RESPONSE]]);
    expect(strangerLink.answers).toEqual([[403, GRAPHQL_RESPONSE]]);
  });

  it('told to take application/json only, gets the refusal answered 200 (a 4xx would be a bare ServerError)', async () => {
    const [ann, eve] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [], 'private');
    const link = recordingApollo(t.url, eve.token, 'application/json');
    const stranger = subscribe(link.client, { c: chatId });
    expect(await holds(() => stranger.completed)).toBe(true);
    expect(codes(stranger)).toEqual(['FORBIDDEN']);
    expect(stranger.errors.every((e) => CombinedGraphQLErrors.is(e))).toBe(true);
    expect(link.answers).toEqual([[200, 'application/json; charset=utf-8']]);
  });

  it("ends with UNAUTHENTICATED (the protocol's transport error) when its session is signed out", async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'hello');
    const live = subscribe(apolloHttpClient(t.url, ann.token), { c: chatId });
    expect(await holds(() => live.texts.length === 1)).toBe(true);
    expect((await t.gql('mutation { signOut }', {}, ann.token)).data).toEqual({ signOut: true });
    expect(await holds(() => live.completed)).toBe(true);
    expect(live.errors.map((e) => CombinedProtocolErrors.is(e))).toEqual([true]);
    expect(codes(live)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('the multipart subscription protocol', () => {
  it('answers multipart/mixed;boundary="graphql";subscriptionSpec="1.0" with heartbeats and payload parts', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'hello');
    const controller = new AbortController();
    const res = await fetch(t.url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'multipart/mixed;subscriptionSpec="1.0", application/json',
        authorization: `Bearer ${ann.token}`,
      },
      body: JSON.stringify({ query: MESSAGE_ADDED, variables: { c: chatId } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const parts = () =>
      text
        .split('\r\n--graphql')
        .slice(1, -1) // the last may be incomplete
        .map((part) => {
          const [head, body] = part.split('\r\n\r\n');
          return { head: head!.trim().toLowerCase(), body: JSON.parse(body!) as unknown };
        });
    while (parts().filter((p) => JSON.stringify(p.body) === '{}').length < 3) text += (await reader.read()).value;
    controller.abort();
    expect(parts().every((p) => p.head === 'content-type: application/json; charset=utf-8')).toBe(true);
    expect(parts()[0]!.body).toEqual({}); // at once, before any event
    const message = { id: 1, chatId, text: 'hello', sender: { username: ann.username } };
    expect(parts().filter((p) => JSON.stringify(p.body) !== '{}')).toEqual([
      { head: 'content-type: application/json; charset=utf-8', body: { payload: { data: { messageAdded: message } } } },
    ]);
  });

  it('is served, or SSE is, as the Accept header lists them first', async () => {
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, [], 'hello');
    const served = async (accept: string) => {
      const controller = new AbortController();
      const res = await fetch(t.url, {
        method: 'POST',
        signal: controller.signal,
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${ann.token}` },
        body: JSON.stringify({ query: MESSAGE_ADDED, variables: { c: chatId } }),
      });
      controller.abort();
      return res.headers.get('content-type');
    };
    const multipart = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"';
    expect(await served('text/event-stream, multipart/mixed;subscriptionSpec=1.0')).toBe('text/event-stream');
    expect(await served('multipart/mixed; subscriptionSpec="1.0", text/event-stream')).toBe(multipart);
    // Without subscriptionSpec, multipart/mixed is the incremental-delivery format, which subscriptions do not take.
    expect(await served('multipart/mixed, text/event-stream')).toBe('text/event-stream');
  });

  it.each([
    // Apollo Client 4's HttpLink, as it sends it.
    [
      'multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9',
      401,
      GRAPHQL_RESPONSE,
    ],
    [
      'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json',
      200,
      'application/json; charset=utf-8',
    ],
  ])(
    'refused before its stream starts, accepting %s, answers %i as JSON with the code',
    async (accept, status, type) => {
      const res = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: 'subscription { messageAdded { id } }' }),
      });
      expect([res.status, res.headers.get('content-type')]).toEqual([status, type]);
      const body = (await res.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
      expect(body.errors.map((e) => e.extensions.code)).toEqual(['UNAUTHENTICATED']);
      expect('data' in body).toBe(false);
    },
  );

  it('is refused with 406 and a message naming both formats when the Accept header takes neither', async () => {
    const ann = await t.signUp();
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${ann.token}` },
      body: JSON.stringify({ query: MESSAGE_ADDED }),
    });
    expect(res.status).toBe(406);
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]!.message).toContain('text/event-stream');
    expect(body.errors[0]!.message).toContain('multipart/mixed;subscriptionSpec="1.0"');
  });
});
