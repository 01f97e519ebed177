/**
 * The subscription engine's two ways of noticing a message: the doorbell (sharded pub/sub) and the poll.
 * Each test disables one of them, so delivery proves the other works on its own.
 */
import { describe, expect, it } from 'vitest';
import { chatCommands } from '../../src/redis/chat/commands.js';
import { keyspace, type Keyspace } from '../../src/redis/keys.js';
import { keysOf } from '../support/keys.js';
import { startTestApp } from '../support/app.js';
import { MESSAGE_ADDED, createChat, record, send } from '../support/chats.js';

describe('mailbox poller', () => {
  it('delivers by the doorbell alone when the poll ticks once a minute', async () => {
    const t = await startTestApp({ POLL_INTERVAL_MS: '60000', POLL_IDLE_MS: '60000' });
    const [ann, bob] = await Promise.all([t.signUp(), t.signUp()]);
    const chatId = await createChat(t, ann.token, [bob.username], 'first');
    const live = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await live.until((items) => items.length === 1);
    await send(t, ann.token, chatId, 'rung');
    await live.until((items) => items.length === 2, 10_000);
    expect(live.items.map((m) => m.text)).toEqual(['first', 'rung']);
  });

  it('delivers by the poll alone when the doorbell is never rung', async () => {
    const t = await startTestApp({ POLL_INTERVAL_MS: '50', POLL_IDLE_MS: '200' });
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
    await chatCommands(t.redis, silenced).sendMessage({
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
    expect(t.app.services.poller.size).toEqual({ keys: watching.keys + 1, channels: watching.channels + 1 });
    live.stop();
    await expect.poll(() => t.app.services.poller.size).toEqual(watching); // unwatched on unsubscribe
  });
});
