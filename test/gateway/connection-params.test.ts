/**
 * graphql-ws keeps a socket's `connection_init` payload for the socket's life; the gateway keeps only its
 * authorization, so a client cannot pin up to MAX_REQUEST_BYTES of it per socket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { rawWsSocket } from '../support/clients.js';
import { heapAfterGc } from '../support/heap.js';

const SOCKETS = 10;
const JUNK = 800_000; // characters of an unread connection parameter per socket: 8 MB in all if kept

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('connection_init', () => {
  it('keeps only the authorization of its payload: the socket still authenticates, the rest is not held', async () => {
    const { token, username } = await t.signUp();
    const before = heapAfterGc();
    // Raw sockets, so that nothing on this side keeps the payloads once sent.
    const sockets = await Promise.all(
      Array.from({ length: SOCKETS }, async (_, i) => {
        const { socket, send, next } = await rawWsSocket(t.wsUrl, {
          authorization: `Bearer ${token}`,
          junk: `${i}`.padEnd(JUNK, 'j'),
        });
        send({ id: '1', type: 'subscribe', payload: { query: '{ me { username } }' } });
        // The socket answers `me` as the token's user: the authorization was kept and read.
        expect(await next()).toEqual({ id: '1', type: 'next', payload: { data: { me: { username } } } });
        return socket;
      }),
    );
    const held = heapAfterGc() - before;
    expect(held).toBeLessThan((SOCKETS * JUNK) / 3);
    for (const socket of sockets) socket.close();
  });
});
