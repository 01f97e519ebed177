/**
 * The benches' GraphQL client (bench/support/poster.ts) against a real gateway: each answer goes to its own request
 * with 50 in flight, errors and refusals are thrown, and a connection the gateway closed while idle is not reused.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { rawPoster } from '../../bench/support/poster.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp, type TestApp } from '../support/app.js';

describe("the benches' rawPoster", () => {
  let t: TestApp;
  let post: (body: string) => Promise<string>;
  let username: string;

  beforeAll(async () => {
    t = await startTestApp();
    const user = await t.signUp();
    username = user.username;
    const { port } = t.app.server.address() as { port: number };
    post = rawPoster(`http://127.0.0.1:${port}`, { authorization: `Bearer ${user.token}` });
  });

  it('answers every request in flight with its own body', async () => {
    const bodies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(JSON.stringify({ query: `{ a${i}: me { username } }` }))),
    );
    bodies.forEach((body, i) => expect(JSON.parse(body)).toEqual({ data: { [`a${i}`]: { username } } }));
  });

  it('throws an answer with errors, and a refusal with its status', async () => {
    await expect(post(JSON.stringify({ query: '{ nope }' }))).rejects.toThrow(/HTTP 200: .*"errors"/);
    await expect(post('not json')).rejects.toThrow(/HTTP 400/);
    // the connections stay usable
    expect(JSON.parse(await post(JSON.stringify({ query: '{ me { username } }' })))).toEqual({
      data: { me: { username } },
    });
  });

  it('opens a new connection when the gateway closed an idle one', async () => {
    await post(JSON.stringify({ query: '{ me { username } }' }));
    t.app.server.closeIdleConnections();
    await sleep(50);
    expect(JSON.parse(await post(JSON.stringify({ query: '{ me { username } }' })))).toEqual({
      data: { me: { username } },
    });
  });
});
