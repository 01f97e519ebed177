/**
 * What slow and greedy clients get, over real sockets: a request trickled byte by byte is cut with 408 after
 * REQUEST_TIMEOUT_MS; past MAX_CONNECTIONS new connections are closed at once; a WebSocket client that stops reading
 * is closed with 1013 once a send has not completed for WS_SEND_TIMEOUT_MS.
 */
import { connect, type Socket } from 'node:net';
import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CLOSE_SLOW_CONSUMER } from '../../src/gateway/sockets.js';
import { eventually, startTestApp, type TestApp } from '../support/app.js';
import { SEND, createChat } from '../support/chats.js';

async function app(env: Record<string, string>, log?: Logger): Promise<TestApp> {
  const t = await startTestApp(env, log);
  return t;
}

/** A raw TCP connection to the app, recording what it receives and when it closes. */
function rawSocket(t: TestApp): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('a client that sends its request slowly', () => {
  it('gets 408 and a closed connection after REQUEST_TIMEOUT_MS, however steadily it trickles', async () => {
    const t = await app({ REQUEST_TIMEOUT_MS: '1000' });
    const { socket, received, closed } = await rawSocket(t);
    socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{');
    // One byte every 200 ms would take 40 s to finish the body.
    const trickle = setInterval(() => socket.writable && socket.write(' '), 200);
    const outcome = await Promise.race([
      closed.then(() => 'closed'),
      new Promise((r) => setTimeout(() => r('still open'), 10_000)),
    ]);
    clearInterval(trickle);
    expect(outcome).toBe('closed');
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
    expect((await t.gql('{ maintenance }')).data).toEqual({ maintenance: false }); // others are served
  });
});

describe('MAX_CONNECTIONS', () => {
  it('closes connections past the cap at once, and takes new ones when others close', async () => {
    const t = await app({ MAX_CONNECTIONS: '3' });
    const held = await Promise.all([rawSocket(t), rawSocket(t), rawSocket(t)]);
    // Slow clients: headers never finished.
    for (const h of held) h.socket.write('GET /graphql HTTP/1.1\r\n');
    const extra = await rawSocket(t);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await extra.closed;
    expect(extra.received()).toBe('');

    held[0].socket.destroy();
    await held[0].closed;
    const again = await rawSocket(t);
    again.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await again.closed;
    expect(again.received()).toMatch(/^HTTP\/1\.1 200 /);
    for (const h of held) h.socket.destroy();
  });
});

describe('a WebSocket client that stops reading', () => {
  it(`is closed with ${CLOSE_SLOW_CONSUMER} once a send has waited WS_SEND_TIMEOUT_MS, and gets the close frame when it reads again`, async () => {
    const lines: { msg?: string }[] = [];
    const log = pino(
      { level: 'warn' },
      { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) },
    );
    const t = await app({ WS_SEND_TIMEOUT_MS: '1000', MAX_MESSAGE_LENGTH: '100000' }, log);
    const ann = await t.signUp();
    const chatId = await createChat(t, ann.token, []);
    // 12 MB waiting: more than the kernel's buffers of both ends hold.
    const big = 'x'.repeat(100_000);
    for (let i = 0; i < 12; i++)
      await Promise.all(Array.from({ length: 10 }, () => t.gql(SEND, { c: chatId, t: big }, ann.token)));

    const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws');
    let received = 0;
    socket.on('message', () => received++);
    const closed = new Promise<number>((resolve) => socket.on('close', (c) => resolve(c)));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${ann.token}` } }));
    await new Promise((resolve) => socket.once('message', resolve)); // connection_ack
    socket.send(
      JSON.stringify({
        id: 'a',
        type: 'subscribe',
        payload: { query: 'subscription($c: ID) { messageAdded(chatId: $c) { id text } }', variables: { c: chatId } },
      }),
    );
    // The client stops reading; the gateway's send waits once the buffers are full.
    const raw = (socket as unknown as { _socket: Socket })._socket;
    raw.pause();
    const decided = await eventually(
      () => Promise.resolve(lines.some((l) => l.msg === 'websocket closed: the client reads too slowly')),
      10_000,
    );
    expect(decided).toBe(true);
    raw.resume();
    expect(await closed).toBe(CLOSE_SLOW_CONSUMER);
    expect(received).toBeGreaterThan(1); // what was sent before the close frame arrives first
  });
});

describe('a stop while a WebSocket client does not answer', () => {
  it('cuts the socket off after its close grace instead of waiting for ws close timeout', async () => {
    const t = await startTestApp();
    const socket = new WebSocket(t.wsUrl, 'graphql-transport-ws');
    await new Promise((resolve) => socket.once('open', resolve));
    (socket as unknown as { _socket: Socket })._socket.pause(); // it will never answer the 1001
    // A minute to drain requests: only the socket could hold the stop, and ws alone would keep it for 30 s.
    const closing = t.app.close(60_000).then(() => 'closed');
    expect(await Promise.race([closing, new Promise((r) => setTimeout(() => r('still waiting'), 10_000))])).toBe(
      'closed',
    );
    socket.terminate();
  });
});
