/**
 * The subscription engine's ways of noticing a message: the doorbell (sharded pub/sub), the read after the doorbell
 * connection comes back, and the audit. Each test disables the others, so delivery proves that one works on its own.
 */
import { describe, expect, it } from 'vitest';
import { chatCommands } from '../../src/redis/chat/commands.js';
import { keyspace, type Keyspace } from '../../src/redis/keys.js';
import { keysOf } from '../support/keys.js';
import { killDoorbells, startTestApp, uniqueName } from '../support/app.js';
import { MESSAGE_ADDED, createChat, record, send } from '../support/chats.js';

describe('mailbox poller', () => {
  it('delivers by the doorbell alone when the audit reads each head once an hour', async () => {
    const t = await startTestApp({ POLL_AUDIT_MS: '3600000' });
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'first');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    await send(t, ann.token, chatId, 'rung');
    await live.until((items) => items.length === 2, 10_000);
    expect(live.items.map((m) => m.text)).toEqual(['first', 'rung']);
  });

  it('delivers by the audit alone when the doorbell is never rung', async () => {
    const t = await startTestApp({ POLL_AUDIT_MS: '200' });
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'first');
    const watching = t.app.services.poller.size; // the session revocations' doorbell
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    // The send script with the chat's doorbell pointed at a channel nobody listens to.
    const space = keyspace(t.config.keyPrefix);
    const bell = keysOf(t.config.keyPrefix).chat(chatId).bell;
    const silenced: Keyspace = {
      ...space,
      key: (...parts) => (space.key(...parts) === bell ? `${bell}:nobody` : space.key(...parts)),
    };
    await chatCommands(t.redis, silenced, t.app.services.replicated).sendMessage({
      chatId,
      sender: ann.username,
      text: 'silent',
      backlog: 10_000,
      history: 100,
      claimMs: 30_000,
      doorbellMax: 16_384,
      contactsMax: 20,
      scheduledId: '',
    });
    await live.until((items) => items.length === 2, 10_000);
    expect(live.items.map((m) => m.text)).toEqual(['first', 'silent']);
    await expect.poll(() => t.app.services.poller.lost).toBe(1); // the audit tells the ring was lost
    expect(t.app.services.poller.size).toEqual({ keys: watching.keys + 1, channels: watching.channels + 1 });
    live.stop();
    await expect.poll(() => t.app.services.poller.size).toEqual(watching); // unwatched on unsubscribe
  });

  it('reads every head when its doorbell connection comes back: nothing sent while it was down is lost', async () => {
    const t = await startTestApp({ POLL_AUDIT_MS: '3600000' });
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'first');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    for (let round = 1; round <= 3; round++) {
      // Killed (once the last round's connection is back), then messages are sent while it reconnects: their rings
      // go nowhere.
      await expect.poll(() => killDoorbells(t), { timeout: 10_000 }).toBeGreaterThan(0);
      await Promise.all([1, 2, 3].map((n) => send(t, ann.token, chatId, `r${round}.${n}`)));
      await live.until((items) => items.length === 1 + 3 * round, 10_000);
    }
    expect(live.items.map((m) => m.text).sort()).toEqual(
      ['first', ...[1, 2, 3].flatMap((r) => [1, 2, 3].map((n) => `r${r}.${n}`))].sort(),
    );
    expect(live.items.map((m) => m.id)).toEqual([...live.items.map((m) => m.id)].sort((x, y) => x - y));
    expect(live.closed).toBeNull();
  });

  it('is settled once its doorbells are up and both reads after they came back are done, and not before', async () => {
    const t = await startTestApp({ POLL_AUDIT_MS: '3600000' });
    const { poller } = t.app.services;
    let told = 0;
    poller.listen(
      { channel: uniqueName('quiet') },
      () => undefined,
      () => told++,
    );
    await expect.poll(() => poller.doorbells().settled, { timeout: 10_000 }).toBe(true);
    const before = told;
    await expect.poll(() => killDoorbells(t), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => poller.doorbells().settled).toBe(false);
    await expect.poll(() => poller.doorbells().settled, { timeout: 10_000 }).toBe(true);
    // Its listeners were told that messages may have been lost, at once and again a second later.
    expect(told).toBeGreaterThanOrEqual(before + 2);
  });
});
