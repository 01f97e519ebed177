/**
 * Scheduled messages end to end: scheduled over GraphQL, sent by a worker (in this process, or `npm run worker`
 * processes, one of them killed with SIGKILL mid-run), delivered to live subscribers; cancel, failure when the
 * sender left, authorization and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { keysOf } from '../support/keys.js';
import type { Worker } from '../../src/worker/worker.js';
import { startWorker } from '../../src/worker/start.js';
import { eventually, redisEnv, startTestApp, type TestApp } from '../support/app.js';
import { createChat, MESSAGE_ADDED, range, record, send } from '../support/chats.js';
import { spawnWorker } from '../support/gateway-process.js';

const SCHEDULE = `mutation($c: ID!, $t: String!, $at: DateTime!) {
  scheduleMessage(chatId: $c, text: $t, sendAt: $at) { id chatId text sendAt status message { id } } }`;
const LIST = `query($c: ID!) { scheduledMessages(chatId: $c) { id text sendAt status failure message { id text sender { username } } } }`;
const CANCEL = 'mutation($id: ID!) { cancelScheduledMessage(id: $id) }';
const QUEUES = '{ queues { name ready delayed running failed } }';
const LAST_ID = 'query($c: ID!) { chat(id: $c) { lastMessageId } }';

interface Scheduled {
  id: string;
  text: string;
  sendAt: string;
  status: string;
  failure?: string | null;
  message: { id: number; text?: string } | null;
}

const FAST_WORKER = { WORKER_HEARTBEAT_MS: '100', WORKER_TIMEOUT_MS: '1000', QUEUE_POLL_MS: '50' };
let t: TestApp;
let worker: Worker;

beforeAll(async () => {
  t = await startTestApp(FAST_WORKER);
  worker = startWorker({ services: t.app.services, config: t.config, log: createLogger('silent') });
});

afterAll(() => worker?.stop(1000));

async function schedule(token: string, chatId: string, text: string, sendAt: Date) {
  return t.gql<{ scheduleMessage: Scheduled }>(SCHEDULE, { c: chatId, t: text, at: sendAt.toISOString() }, token);
}

/** Whether the scheduled queue has nothing to run but `delayed` tasks not yet due: nothing it held can still be sent. */
async function drained(app: TestApp, delayed = 0): Promise<boolean> {
  const q = await app.app.services.queues.status({ queue: 'scheduled' });
  return q.ready === 0 && q.running === 0 && q.delayed === delayed;
}

async function lastId(token: string, chatId: string): Promise<number> {
  const r = await t.gql<{ chat: { lastMessageId: number } }>(LAST_ID, { c: chatId }, token);
  return r.data!.chat.lastMessageId;
}

describe('scheduled messages', () => {
  it('reach live subscribers within a second of sendAt, once, and show as SENT with their message', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username], 'hello');
    const feed = record(t.wsClient(bob.token), MESSAGE_ADDED, { c: chatId });
    await feed.until((items) => items.length === 1); // the subscription is live
    const sendAt = new Date(Date.now() + 1500);
    const r = await schedule(ann.token, chatId, 'see you later', sendAt);
    expect(r.errors).toBeUndefined();
    expect(r.data!.scheduleMessage).toMatchObject({
      chatId,
      text: 'see you later',
      status: 'PENDING',
      message: null,
      sendAt: sendAt.toISOString(),
    });
    const [, delivered] = await feed.until((items) => items.length === 2, 10_000);
    const receivedAt = Date.now();
    expect(delivered).toMatchObject({ text: 'see you later', sender: { username: ann.username } });
    expect(receivedAt).toBeGreaterThanOrEqual(sendAt.getTime() - 5); // not early (clock granularity)
    expect(receivedAt - sendAt.getTime()).toBeLessThan(1000);
    // Once nothing is left to send it again (its task acknowledged), a message sent after it comes next: it came once.
    expect(await eventually(() => drained(t))).toBe(true);
    await send(t, ann.token, chatId, 'after it');
    await feed.until((items) => items.length >= 3);
    expect(feed.items.map((m) => m.text)).toEqual(['hello', 'see you later', 'after it']);
    const list = await t.gql<{ scheduledMessages: Scheduled[] }>(LIST, { c: chatId }, ann.token);
    expect(list.data!.scheduledMessages).toEqual([
      expect.objectContaining({
        id: r.data!.scheduleMessage.id,
        status: 'SENT',
        failure: null,
        message: { id: delivered!.id, text: 'see you later', sender: { username: ann.username } },
      }),
    ]);
    // A sent message can no longer be cancelled.
    expect((await t.gql(CANCEL, { id: r.data!.scheduleMessage.id }, ann.token)).data).toEqual({
      cancelScheduledMessage: false,
    });
    feed.stop();
  });

  it('sends a message scheduled in the past at once', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username]);
    const r = await schedule(ann.token, chatId, 'overdue', new Date(Date.now() - 3600_000));
    expect(new Date(r.data!.scheduleMessage.sendAt).getTime()).toBeGreaterThan(Date.now() - 60_000); // "now"
    expect(await eventually(async () => (await lastId(bob.token, chatId)) === 1)).toBe(true);
  });

  it('is never sent once cancelled, and leaves the queue', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username]);
    const before = (await t.app.services.queues.status({ queue: 'scheduled' })).delayed;
    const sendAt = new Date(Date.now() + 800);
    const r = await schedule(ann.token, chatId, 'never mind', sendAt);
    const id = r.data!.scheduleMessage.id;
    expect((await t.app.services.queues.status({ queue: 'scheduled' })).delayed).toBe(before + 1);
    expect((await t.gql(CANCEL, { id }, ann.token)).data).toEqual({ cancelScheduledMessage: true });
    expect((await t.app.services.queues.status({ queue: 'scheduled' })).delayed).toBe(before);
    // One scheduled for the same time is sent, and then the queue has run dry: the cancelled one's time came and went.
    const same = (await schedule(ann.token, chatId, 'same time', sendAt)).data!.scheduleMessage.id;
    expect(await eventually(async () => (await lastId(bob.token, chatId)) === 1 && drained(t, before))).toBe(true);
    const texts = await t.gql<{ chat: { messages: { text: string }[] } }>(
      'query($c: ID!) { chat(id: $c) { messages { text } } }',
      { c: chatId },
      bob.token,
    );
    expect(texts.data!.chat.messages).toEqual([{ text: 'same time' }]);
    const list = await t.gql<{ scheduledMessages: Scheduled[] }>(LIST, { c: chatId }, ann.token);
    expect(list.data!.scheduledMessages.map((m) => [m.id, m.status])).toEqual(
      expect.arrayContaining([
        [id, 'CANCELLED'],
        [same, 'SENT'],
      ]),
    );
    expect(list.data!.scheduledMessages).toHaveLength(2);
    expect((await t.gql(CANCEL, { id }, ann.token)).data).toEqual({ cancelScheduledMessage: false });
  });

  it('ends FAILED, with a notification to the sender, when the sender left the chat', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username]);
    const r = await schedule(ann.token, chatId, 'too late', new Date(Date.now() + 500));
    const id = r.data!.scheduleMessage.id;
    expect((await t.gql('mutation($c: ID!) { leaveChat(chatId: $c) }', { c: chatId }, ann.token)).data).toEqual({
      leaveChat: true,
    });
    expect(await eventually(async () => (await t.app.services.scheduled.get({ id }))?.status === 'FAILED', 5000)).toBe(
      true,
    );
    expect(await lastId(bob.token, chatId)).toBe(0);
    const notes = await t.gql<{ notifications: { kind: string; data: unknown }[] }>(
      '{ notifications { kind data } }',
      {},
      ann.token,
    );
    expect(notes.data!.notifications).toContainEqual({ kind: 'scheduleFailed', data: { chatId, scheduledId: id } });
    expect((await t.app.services.scheduled.get({ id }))?.reason).toMatch(/not a member/);
  });

  it('is for members only, and each scheduled message for its sender only', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const eve = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username]);
    const r = await schedule(eve.token, chatId, 'let me in', new Date(Date.now() + 60_000));
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql(LIST, { c: chatId }, eve.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const mine = await schedule(ann.token, chatId, 'mine', new Date(Date.now() + 60_000));
    const id = mine.data!.scheduleMessage.id;
    expect((await t.gql(CANCEL, { id }, bob.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql(CANCEL, { id }, eve.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // Bob is a member but sees only his own.
    expect(
      (await t.gql<{ scheduledMessages: Scheduled[] }>(LIST, { c: chatId }, bob.token)).data!.scheduledMessages,
    ).toEqual([]);
    expect(
      (await t.gql(SCHEDULE, { c: chatId, t: 'x', at: new Date().toISOString() })).errors?.[0]?.extensions?.code,
    ).toBe('UNAUTHENTICATED');
    expect((await t.gql(QUEUES, {}, ann.token)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql(CANCEL, { id }, ann.token)).data).toEqual({ cancelScheduledMessage: true });
  });

  it('refuses bad input with BAD_USER_INPUT or NOT_FOUND and writes nothing', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username]);
    const soon = new Date(Date.now() + 60_000);
    const cases: [Record<string, unknown>, string][] = [
      [{ c: chatId, t: 'hi', at: 'tomorrow' }, 'BAD_USER_INPUT'],
      [{ c: chatId, t: 'hi', at: '2026-13-45T99:00:00Z' }, 'BAD_USER_INPUT'],
      [{ c: chatId, t: 'hi', at: new Date(Date.now() + 400 * 24 * 3600_000).toISOString() }, 'BAD_USER_INPUT'],
      [{ c: chatId, t: '   ', at: soon.toISOString() }, 'BAD_USER_INPUT'],
      [{ c: chatId, t: 'x'.repeat(t.config.chats.maxMessageLength + 1), at: soon.toISOString() }, 'BAD_USER_INPUT'],
      [{ c: 'not-a-chat', t: 'hi', at: soon.toISOString() }, 'BAD_USER_INPUT'],
      [{ c: '987654321', t: 'hi', at: soon.toISOString() }, 'NOT_FOUND'],
    ];
    for (const [variables, code] of cases) {
      const r = await t.gql(SCHEDULE, variables, ann.token);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(variables).slice(0, 80)).toBe(code);
    }
    expect(
      (await t.gql<{ scheduledMessages: Scheduled[] }>(LIST, { c: chatId }, ann.token)).data!.scheduledMessages,
    ).toEqual([]);
    expect((await t.gql(CANCEL, { id: '../../etc' }, ann.token)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.gql(CANCEL, { id: 'AAAAAAAAAAAAAAAA' }, ann.token)).errors?.[0]?.extensions?.code).toBe(
      'NOT_FOUND',
    );
  });

  it('refuses more than 100 pending per sender and chat with BUSY', async () => {
    const ann = await t.signUp();
    const bob = await t.signUp();
    const chatId = await createChat(t, ann.token, [bob.username]);
    const later = new Date(Date.now() + 3600_000);
    for (let i = 0; i < 100; i++)
      await t.app.services.scheduled.scheduleMessage(ann.username, { chatId, text: `m${i}`, sendAt: later });
    const r = await schedule(ann.token, chatId, 'one too many', later);
    expect(r.errors?.[0]?.extensions?.code).toBe('BUSY');
    const list = await t.gql<{ scheduledMessages: Scheduled[] }>(LIST, { c: chatId }, ann.token);
    expect(list.data!.scheduledMessages).toHaveLength(100);
    await Promise.all(
      list.data!.scheduledMessages.map((m) =>
        t.app.services.scheduled.cancelScheduledMessage(ann.username, { id: m.id }),
      ),
    );
  });

  it('shows admins the queues', async () => {
    const admin = await t.signUp('admin');
    const r = await t.gql<{ queues: { name: string; failed: number }[] }>(QUEUES, {}, admin.token);
    expect(r.errors).toBeUndefined();
    // every domain's queue is listed (ads learn through one too)
    expect(r.data!.queues).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'scheduled', failed: 0 })]));
  });
});

describe('scheduled messages and worker processes', () => {
  it('sends each of 1000 exactly once when a worker is killed with SIGKILL mid-run and another takes over', async () => {
    // A gateway of its own (no worker in it) so that only the worker processes send.
    const g = await startTestApp(FAST_WORKER);
    // Ten senders with 100 each (the most one sender may have pending in a chat).
    const bob = await g.signUp();
    const senders = await Promise.all(range(1, 10).map(() => g.signUp()));
    const chatId = await createChat(
      g,
      bob.token,
      senders.map((s) => s.username),
    );
    const now = new Date();
    const ids: string[] = [];
    for (const [k, sender] of senders.entries()) {
      const batch = await Promise.all(
        range(0, 99).map((n) =>
          g.app.services.scheduled.scheduleMessage(sender.username, { chatId, text: `m${k * 100 + n}`, sendAt: now }),
        ),
      );
      ids.push(...batch.map((m) => m.id));
    }
    const env = {
      ...redisEnv(),
      KEY_PREFIX: g.config.keyPrefix,
      ...FAST_WORKER,
      WORKER_CONCURRENCY: '16',
      LOG_LEVEL: 'warn',
    };
    const first = spawnWorker(env);
    const lastOf = () => lastIdOf(g, chatId, bob.username);
    expect(await eventually(async () => (await lastOf()) >= 200, 30_000, 10)).toBe(true);
    first.kill('SIGKILL');
    const sentWhenKilled = await lastOf();
    const second = spawnWorker(env);
    let secondLog = '';
    second.stdout?.on('data', (c: Buffer) => (secondLog += c.toString()));
    try {
      expect(await eventually(async () => (await lastOf()) >= 1000, 60_000, 100)).toBe(true);
      // Nothing is left to send a duplicate: every task acknowledged, the killed worker's returned and run again.
      expect(await eventually(() => drained(g), 30_000, 100)).toBe(true);
      const texts = await allTexts(g, chatId, bob.username);
      expect(texts).toHaveLength(1000);
      expect(new Set(texts).size).toBe(1000);
      const statuses = await Promise.all(ids.map((id) => g.app.services.scheduled.get({ id }).then((m) => m?.status)));
      expect(statuses.filter((s) => s === 'SENT')).toHaveLength(1000);
      const q = keysOf(g.config.keyPrefix).queue('scheduled');
      expect(await g.redis.llen(q.ready)).toBe(0);
      // The first worker's unfinished tasks came back through the heartbeat check, not by luck.
      expect(secondLog).toContain('returned the tasks of a worker that stopped heartbeating');
      console.log(
        `1000 scheduled messages: ${sentWhenKilled} sent when the first worker was killed; all sent once after the second took over`,
      );
    } finally {
      const exited = new Promise<number | null>((resolve) => second.once('exit', resolve));
      second.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    // The killed worker was forgotten when its tasks were returned, the stopped one when it stopped.
    expect(await g.redis.zcard(keysOf(g.config.keyPrefix).queue('scheduled').workers)).toBe(0);
  }, 120_000);
});

async function lastIdOf(g: TestApp, chatId: string, viewer: string): Promise<number> {
  const [state] = await g.app.services.chats.states(viewer, { chatIds: [chatId] });
  return state?.lastMessageId ?? 0;
}

async function allTexts(g: TestApp, chatId: string, viewer: string): Promise<string[]> {
  const texts: string[] = [];
  let after = 0;
  for (;;) {
    const page = await g.app.services.chats.read(viewer, { chatId, after, first: 500 });
    texts.push(...page.messages.map((m) => m.text));
    if (page.messages.length === 0) return texts;
    after = page.messages[page.messages.length - 1]!.id;
  }
}
