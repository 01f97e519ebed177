/**
 * Three gateway processes on one Redis: 300 subscribers in 30 chats, 1000 messages sent through random
 * processes, one process killed with SIGKILL mid-run. Every subscriber must get every message of its chat,
 * in order; those whose process died reconnect to another and catch up (repeats only of unread messages,
 * which a client removes by id).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import type { Services } from '../../src/services/index.js';
import { eventually, postGraphQL, redisEnv, uniqueName, uniquePrefix, wsClient } from '../support/app.js';
import { MESSAGE_ADDED, SEND, range, record, type Delivered, type Recorder } from '../support/chats.js';
import { startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { startTestServices } from '../support/services.js';

const CHATS = 30;
const PER_CHAT = 10;
const MESSAGES = 1000;
const KILL_AFTER = 400;

const prefix = uniquePrefix();
let gateways: GatewayProcess[] = [];
let services: Services;

beforeAll(async () => {
  gateways = await Promise.all([1, 2, 3].map(() => startGateway({ ...redisEnv(), KEY_PREFIX: prefix })));
  ({ services } = startTestServices({ KEY_PREFIX: prefix }));
}, 60_000);

interface Subscriber {
  chatId: string;
  token: string;
  client: Client;
  recorder: Recorder<Delivered>;
  connections: number;
  home: number;
}

/** Users with sessions made through the services (no password hashing: 330 scrypt runs would dominate the test). */
async function seedUser(): Promise<{ username: string; token: string }> {
  const username = uniqueName('p');
  await services.users.createSystemUser({ username });
  return { username, token: await services.sessions.create({ username }) };
}

describe('three gateway processes on one Redis', () => {
  it('delivers every message of its chats to each of 300 subscribers, in order, through a SIGKILL of one process', async () => {
    const alive = [true, true, true];
    const wsUrls = gateways.map((g) => g.url.replace(/^http/, 'ws'));
    const chats: { id: string; members: { username: string; token: string }[] }[] = [];
    for (let c = 0; c < CHATS; c++) {
      const members = await Promise.all(Array.from({ length: PER_CHAT }, seedUser));
      const id = await services.chats.createChat(members[0]!.username, {
        members: members.slice(1).map((m) => m.username),
      });
      chats.push({ id, members });
    }

    const subscribers: Subscriber[] = chats.flatMap((chat, c) =>
      chat.members.map((member, m) => {
        const home = (c * PER_CHAT + m) % 3;
        const s = { chatId: chat.id, token: member.token, connections: 0, home } as Subscriber;
        let attempt = 0;
        s.client = wsClient(wsUrls[home]!, member.token, {
          // The first connection goes home; later ones go round the processes still alive.
          url: () => {
            for (;;) {
              const i = (home + attempt++) % 3;
              if (alive[i]) return wsUrls[i]!;
            }
          },
          retryAttempts: Infinity,
          shouldRetry: () => true,
          retryWait: () => new Promise((r) => setTimeout(r, 100 + Math.random() * 200)),
          on: { connected: () => void s.connections++ },
        });
        s.recorder = record(s.client, MESSAGE_ADDED, { c: chat.id, r: true });
        return s;
      }),
    );

    let sent = 0;
    const sendOne = async (): Promise<void> => {
      const chat = chats[Math.floor(Math.random() * CHATS)]!;
      const sender = chat.members[Math.floor(Math.random() * PER_CHAT)]!;
      for (;;) {
        const live = [0, 1, 2].filter((i) => alive[i]);
        const g = gateways[live[Math.floor(Math.random() * live.length)]!]!;
        try {
          const r = await postGraphQL<{ sendMessage: { id: number } }>(
            `${g.url}`,
            SEND,
            { c: chat.id, t: `to ${chat.id}` },
            sender.token,
          );
          if (r.data?.sendMessage) return;
          throw new Error(JSON.stringify(r.errors));
        } catch {
          // That process died under us: send again through another one (the first may have landed too).
        }
      }
    };
    const senders = Array.from({ length: 10 }, async () => {
      while (sent < MESSAGES) {
        sent++;
        if (sent === KILL_AFTER) {
          alive[1] = false;
          await stopGateway(gateways[1]!, 'SIGKILL');
        }
        await sendOne();
      }
    });
    await Promise.all(senders);

    const last = new Map(
      await Promise.all(
        chats.map(
          async (chat) =>
            [
              chat.id,
              (await services.chats.states(chat.members[0]!.username, { chatIds: [chat.id] }))[0]!.lastMessageId,
            ] as const,
        ),
      ),
    );
    expect([...last.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(MESSAGES);

    const caughtUp = await eventually(
      () => Promise.resolve(subscribers.every((s) => s.recorder.items.some((m) => m.id === last.get(s.chatId)))),
      60_000,
      200,
    );
    const behind = subscribers.filter((s) => !s.recorder.items.some((m) => m.id === last.get(s.chatId)));
    expect(caughtUp, `${behind.length} subscribers behind`).toBe(true);

    for (const s of subscribers) {
      const got = s.recorder.items;
      expect(got.every((m) => m.chatId === s.chatId)).toBe(true);
      expect([...new Set(got.map((m) => m.id))].sort((a, b) => a - b)).toEqual(range(1, last.get(s.chatId)!));
      // In order: ids only go down where a connection started again from the read position.
      const restarts = got.filter((m, i) => i > 0 && m.id <= got[i - 1]!.id).length;
      expect(restarts).toBeLessThanOrEqual(s.connections - 1);
      if (s.home !== 1) {
        expect(s.connections).toBe(1);
        expect(got.map((m) => m.id)).toEqual(range(1, last.get(s.chatId)!)); // never disconnected: exactly once
      }
    }
    expect(subscribers.filter((s) => s.home === 1).every((s) => s.connections >= 2)).toBe(true);
    await Promise.all(subscribers.map(async (s) => s.client.dispose()));
  }, 180_000);
});
