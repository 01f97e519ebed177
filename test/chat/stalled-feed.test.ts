/**
 * A live feed whose client stops reading holds at most a read's worth of the messages its doorbells carried
 * (FEED_BATCH); the rest stay in the chat's mailbox, and the feed reads them from there once the client reads again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_BATCH } from '../../src/services/chat/feeds.js';
import type { Message } from '../../src/services/chat/chats.js';
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
});
