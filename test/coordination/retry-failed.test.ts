/**
 * An operator's retry of a failed task over GraphQL (the dashboard's queue panel uses it): `queues` lists a queue's
 * failed tasks (at most 100 a read), `retryFailedTask` puts one back in the ready list with its attempts counted from
 * 0, once; admins only; bad ids are BAD_USER_INPUT with nothing written.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { fileFailedTask } from '../support/failed-tasks.js';

let t: TestApp;
let admin: string;
let queue: string;

const QUEUES = `{ queues { name ready delayed running failed failedTasks(first: 5) { id name error failedAt attempts } } }`;
const RETRY = 'mutation($q: String!, $id: ID!) { retryFailedTask(queue: $q, id: $id) }';

interface Status {
  name: string;
  ready: number;
  failed: number;
  failedTasks: { id: string; name: string; error: string; failedAt: string; attempts: number }[];
}
const statusOf = async (): Promise<Status> => {
  const r = await t.gql<{ queues: Status[] }>(QUEUES, {}, admin);
  return r.data!.queues.find((q) => q.name === queue)!;
};

beforeAll(async () => {
  t = await startTestApp();
  admin = (await t.signUp('admin')).token;
  queue = t.app.services.scheduled.queueName;
});

describe('retryFailedTask', () => {
  it('lists the failed task and puts it back in the ready list once, with its attempts from 0', async () => {
    const id = await fileFailedTask(t, queue, 'flaky', 'boom');
    const before = await statusOf();
    expect(before).toMatchObject({ ready: 0, failed: 1 });
    expect(before.failedTasks).toEqual([
      { id, name: 'flaky', error: 'boom', failedAt: expect.any(String) as string, attempts: 1 },
    ]);

    expect((await t.gql(RETRY, { q: queue, id }, admin)).data).toEqual({ retryFailedTask: true });
    expect(await statusOf()).toMatchObject({ ready: 1, failed: 0, failedTasks: [] });
    const [task] = await t.app.services.queues.takeReady({ queue, workerId: 'test-worker', max: 1 });
    expect(task).toMatchObject({ id, name: 'flaky', attempts: 0, maxAttempts: 1, args: { from: 'test' } });
    await t.app.services.queues.ack({ queue, workerId: 'test-worker', task: task!, take: 0 });

    expect((await t.gql(RETRY, { q: queue, id }, admin)).data).toEqual({ retryFailedTask: false });
  });

  it('is for admins only, and refuses a malformed id or queue with nothing written', async () => {
    const id = await fileFailedTask(t, queue, 'refused', 'nope');
    const user = await t.signUp();
    const refused = await t.gql(RETRY, { q: queue, id }, user.token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    for (const bad of [
      { q: queue, id: 'x'.repeat(65) },
      { q: queue, id: 'a b' },
      { q: '{x}', id },
    ]) {
      const r = await t.gql(RETRY, bad, admin);
      expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await statusOf()).toMatchObject({ ready: 0, failed: 1 });
    const tooMany = await t.gql('{ queues { failedTasks(first: 101) { id } } }', {}, admin);
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.gql(RETRY, { q: queue, id }, admin)).data).toEqual({ retryFailedTask: true });
  });
});
