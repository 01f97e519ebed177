/**
 * A live feed whose client stops reading holds at most a read's worth of the messages its doorbells carried
 * (FEED_BATCH); the rest stay in the chat's mailbox, and the feed reads them from there once the client reads again.
 * If they are gone from there meanwhile (read on every device, then deleted past CHAT_HISTORY), the feed says so and
 * ends, rather than skip them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_BATCH } from '../../src/services/chat/feeds.js';
import type { Message } from '../../src/services/chat/chats.js';
import type { AppError } from '../../src/errors.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { heapAfterGc } from '../support/heap.js';

const MESSAGES = 1500;
const TEXT_LENGTH = 8000; // 1,500 messages of 8,000 characters: about 12 MB if every ring were kept

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ MAX_MESSAGE_LENGTH: String(TEXT_LENGTH) });
});
afterAll(() => t.close());

describe('a feed whose client stops reading', () => {
  it('keeps at most a read of the rings meanwhile, then delivers every message in order from the mailbox', async () => {
    const { chats, feeds } = t.app.services;
    const [ann, bob] = ['stall_ann', 'stall_bob'];
    await Promise.all([ann, bob].map((username) => t.app.services.users.createSystemUser({ username })));
    const chatId = await chats.createChat(ann, { members: [bob], message: 'first' });
    const feed = (await feeds.messageAdded(bob, { chatId, markRead: false }))[Symbol.asyncIterator]();
    expect(((await feed.next()).value as Message).text).toBe('first'); // the feed is live, then its client stalls

    const before = heapAfterGc();
    let last = 0;
    for (let i = 0; i < MESSAGES; i++) {
      const sent = await chats.sendMessage(ann, { chatId, text: `${i} `.padEnd(TEXT_LENGTH, 'x') });
      last = sent.id;
    }
    // Each ring reaches this process within a few milliseconds of its message: give the last ones time to arrive.
    const rung = await chats.sendMessage(ann, { chatId, text: 'last' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const held = heapAfterGc() - before;
    // FEED_BATCH (100) rings of 8 KB are 0.8 MB; keeping every ring would be about 12 MB.
    expect(held).toBeLessThan(FEED_BATCH * TEXT_LENGTH * 4);

    const texts: string[] = [];
    for (let id = 0; id < MESSAGES + 1; id++) {
      const message = (await feed.next()).value as Message;
      texts.push(message.text.slice(0, 8));
      if (id === MESSAGES) expect(message.id).toBe(rung.id);
      else if (id === MESSAGES - 1) expect(message.id).toBe(last);
    }
    expect(texts.slice(0, MESSAGES).map((text) => Number(text.split(' ')[0]))).toEqual(
      Array.from({ length: MESSAGES }, (_, i) => i),
    );
    await feed.return?.(undefined);
  });

  it('ends with BUSY naming the messages deleted before it sent them, having skipped none', async () => {
    const small = await startTestApp({ CHAT_HISTORY: '5' });
    const { chats, feeds } = small.app.services;
    const [ann, bob] = ['behind_ann', 'behind_bob'];
    await Promise.all([ann, bob].map((username) => small.app.services.users.createSystemUser({ username })));
    const chatId = await chats.createChat(ann, { members: [bob], message: 'first' });
    const feed = (await feeds.messageAdded(bob, { chatId, markRead: false }))[Symbol.asyncIterator]();
    expect(((await feed.next()).value as Message).text).toBe('first'); // live, then its client stalls
    // More than a read's worth of rings: the feed will read the mailbox. Every member (bob on another device)
    // reads them all meanwhile, which deletes all but the last CHAT_HISTORY.
    let last = 0;
    for (let i = 0; i < FEED_BATCH + 50; i++) last = (await chats.sendMessage(ann, { chatId, text: `m${i}` })).id;
    await new Promise((resolve) => setTimeout(resolve, 300)); // the rings arrive
    for (const user of [ann, bob]) await chats.markRead(user, { chatId, upTo: last });

    const ids: number[] = [];
    let end: AppError | undefined;
    // Until it ends, or (having skipped some) sends the last message.
    for (let next = await feed.next(); !next.done; next = await feed.next()) {
      if ('code' in next.value) end = next.value;
      else if (ids.push(next.value.id) && next.value.id === last) break;
    }
    // What it sent runs without a hole from the first message on; then it says what it could not send.
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => 2 + i));
    expect(end?.code).toBe('BUSY');
    expect(end?.message).toBe(
      `this subscription fell behind: messages ${2 + ids.length} to ${last - 5} of chat ${chatId} were deleted (read ` +
        'on every device, or past the backlog) before it sent them; subscribe again to go on from your read position',
    );
  });
});
