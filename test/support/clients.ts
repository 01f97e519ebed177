/**
 * Clients of the real product, as users' programs are: GraphQL over HTTP (fetch), graphql-ws over real sockets, SSE,
 * and polling. No vitest here: the benchmarks use these too.
 */
import { randomBytes } from 'node:crypto';
import {
  createClient as createSseClient,
  type Client as SseClient,
  type ClientOptions as SseClientOptions,
} from 'graphql-sse';
import { createClient, type Client } from 'graphql-ws';
import { pino, type Logger } from 'pino';
import WebSocket from 'ws';
import type { RedisClient } from '../../src/redis/clients.js';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; [k: string]: unknown } }[];
  /** The body as received. */
  text: string;
}

export const uniquePrefix = () => `t${randomBytes(4).toString('hex')}:`;
export const uniqueName = (stem = 'u') => `${stem}${randomBytes(4).toString('hex')}`;

export async function postGraphQL<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<GraphQLResponse<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, text, ...(JSON.parse(text) as Omit<GraphQLResponse<T>, 'status' | 'text'>) };
}

/** Signs a user up on the gateway at `url` (its /graphql); throws unless it worked. */
export async function signUp(
  url: string,
  username = uniqueName(),
  password = 'password123',
): Promise<{ token: string; username: string }> {
  const r = await postGraphQL<{ signUp: { token: string; user: { username: string } } }>(
    url,
    'mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token user { username } } }',
    { u: username, p: password },
  );
  if (!r.data?.signUp) throw new Error(`signUp failed: ${r.text}`);
  return { token: r.data.signUp.token, username: r.data.signUp.user.username };
}

export function wsClient(
  url: string,
  token?: string,
  options: Partial<Parameters<typeof createClient>[0]> = {},
): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
    ...options,
  });
}

/** A graphql-ws message as it crossed the socket. */
export interface WsMessage {
  id?: string;
  type: string;
  payload?: unknown;
}

/**
 * A raw graphql-ws socket, acknowledged after `connection_init` with `payload`: for what a client library would not
 * send (a subscribe and its complete in one burst) or would keep (its payload). `next()` is the next message.
 */
export async function rawWsSocket(
  url: string,
  payload: Record<string, unknown>,
): Promise<{ socket: WebSocket; send: (message: WsMessage) => void; next: () => Promise<WsMessage> }> {
  const socket = new WebSocket(url, 'graphql-transport-ws');
  const messages: WsMessage[] = [];
  const waiter: { wake?: () => void } = {};
  socket.on('message', (data) => {
    messages.push(JSON.parse((data as Buffer).toString()) as WsMessage);
    waiter.wake?.();
  });
  const next = async () => {
    while (messages.length === 0) await new Promise<void>((resolve) => (waiter.wake = resolve));
    return messages.shift()!;
  };
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload }));
  const ack = await next();
  if (ack.type !== 'connection_ack') throw new Error(`connection_init answered ${JSON.stringify(ack)}`);
  return { socket, send: (message) => socket.send(JSON.stringify(message)), next };
}

/** A subscription over graphql-yoga's SSE (a POST answered with text/event-stream), recording each result. */
export interface SseSubscription {
  results: Omit<GraphQLResponse, 'status' | 'text'>[];
  /** Whether the server ended the stream. */
  ended: boolean;
  /** Resolves once `check()` holds; rejects after the deadline. */
  until(check: () => boolean, timeoutMs?: number): Promise<void>;
  cancel(): Promise<void>;
}

export async function sseSubscribe(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  token?: string,
): Promise<SseSubscription> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const sub: SseSubscription = {
    results: [],
    ended: false,
    async until(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline)
          throw new Error(`SSE: timed out with ${JSON.stringify(sub.results)} (ended: ${sub.ended})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
  void (async () => {
    let buffer = '';
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (/^event: next$/m.test(event) && data)
            sub.results.push(JSON.parse(data) as Omit<GraphQLResponse, 'status' | 'text'>);
        }
      }
    } catch {
      // cancelled
    }
    sub.ended = true;
  })();
  return sub;
}

/**
 * The fetch of README's graphql-sse client: a refusal (a 4xx event stream, its coded error inside) is read as the
 * operation's result, where graphql-sse's client would count any status but 2xx as a network error and retry it.
 */
export const refusalsAsResults: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const refused = res.status >= 400 && res.status < 500;
  return refused && res.headers.get('content-type')?.startsWith('text/event-stream')
    ? new Response(res.body, { headers: res.headers })
    : res;
};

/** graphql-sse's client as README shows it (distinct connections unless `singleConnection`). */
export function sseClient<Single extends boolean = false>(
  url: string,
  token?: string,
  options: Partial<SseClientOptions<Single>> = {},
): SseClient<Single> {
  return createSseClient<Single>({
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    fetchFn: refusalsAsResults,
    ...options,
  });
}

/** One operation over a graphql-sse client, recording what it delivers. */
export interface SseRecording {
  results: Omit<GraphQLResponse, 'status' | 'text'>[];
  completed: boolean;
  error: unknown;
  /** Resolves once `check()` holds; rejects after the deadline. */
  until(check: () => boolean, timeoutMs?: number): Promise<void>;
  stop(): void;
}

export function sseRecord(
  client: SseClient<boolean>,
  query: string,
  variables?: Record<string, unknown>,
): SseRecording {
  const rec: SseRecording = {
    results: [],
    completed: false,
    error: undefined,
    async until(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > deadline)
          throw new Error(`graphql-sse: timed out with ${JSON.stringify(rec.results)} (error: ${String(rec.error)})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop: () => undefined,
  };
  rec.stop = client.subscribe(
    { query, variables },
    {
      next: (value) => void rec.results.push(value as SseRecording['results'][number]),
      error: (err) => void (rec.error = err ?? 'error'),
      complete: () => void (rec.completed = true),
    },
  );
  return rec;
}

/**
 * A logger that keeps the gateway's request log (give it to startTestApp): `since()` marks a point, `requests(mark)`
 * gives the [method, status] of each /graphql request logged after it (a request is logged once answered).
 */
export function requestLog(): { log: Logger; since: () => number; requests: (mark: number) => [string?, number?][] } {
  const lines: { msg?: string; method?: string; url?: string; status?: number }[] = [];
  return {
    log: pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) },
    ),
    since: () => lines.length,
    requests: (mark) =>
      lines
        .slice(mark)
        .filter((line) => line.msg === 'request' && line.url?.startsWith('/graphql'))
        .map((line) => [line.method, line.status]),
  };
}

/** Runs one query or mutation (`operationName`, when given) over a graphql-ws client; resolves with its single result. */
export function wsRequest<T = Record<string, unknown>>(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
  operationName?: string,
): Promise<Omit<GraphQLResponse<T>, 'status' | 'text'>> {
  return new Promise((resolve, reject) => {
    let result: Omit<GraphQLResponse<T>, 'status' | 'text'> | undefined;
    client.subscribe<T>(
      { query, variables, operationName },
      {
        next: (value) => (result = value as Omit<GraphQLResponse<T>, 'status' | 'text'>),
        error: (err) =>
          Array.isArray(err)
            ? resolve({ errors: err as GraphQLResponse['errors'] })
            : reject(err instanceof Error ? err : new Error(`socket closed: ${(err as { code?: number }).code}`)),
        complete: () => (result ? resolve(result) : reject(new Error('completed without a result'))),
      },
    );
  });
}

/** Records the names of the commands `redis` sends until `stop` is called, which returns them. */
export function recordCommands(redis: RedisClient): { stop: () => string[] } {
  const calls = recordCalls(redis);
  return { stop: () => calls.stop().map((c) => c.name) };
}

/** A command as sent: its name and arguments. */
export interface Call {
  name: string;
  args: string[];
}

/** Records the commands `redis` sends (`sent`, as they go) until `stop` is called, which returns them. */
export function recordCalls(redis: RedisClient): { sent: readonly Call[]; stop: () => Call[] } {
  const sent: Call[] = [];
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
    sent.push({ name: command.name, args: command.args.map(String) });
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  return {
    sent,
    stop: () => {
      redis.sendCommand = original;
      return sent;
    },
  };
}

/** The keys starting with `prefix` on every master of `redis`, and the bytes they take (MEMORY USAGE). */
export async function prefixMemory(redis: RedisClient, prefix: string): Promise<{ keys: string[]; bytes: number }> {
  const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
  const keys: string[] = [];
  let bytes = 0;
  for (const node of nodes) {
    for (let cursor = '0'; ;) {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      for (const key of batch) {
        keys.push(key);
        bytes += (await node.memory('USAGE', key)) ?? 0;
      }
      cursor = next;
      if (cursor === '0') break;
    }
  }
  return { keys, bytes };
}

/** Polls `check` until it returns true or the deadline passes; returns whether it became true. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Calls `attempt` until it gives something other than null (then that), for at most `timeoutMs` (then throws). */
export async function until<T>(attempt: () => Promise<T | null>, timeoutMs = 5000, intervalMs = 20): Promise<T> {
  let found: T | null = null;
  if (!(await eventually(async () => (found = await attempt()) !== null, timeoutMs, intervalMs)))
    throw new Error(`nothing came within ${timeoutMs} ms`);
  return found!;
}
