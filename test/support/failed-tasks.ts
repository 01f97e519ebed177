import type { TestApp } from './app.js';

/** Files a task of `queue` as failed the way a worker does: taken, then failed on its last attempt. */
export async function fileFailedTask(app: TestApp, q: string, name: string, error: string): Promise<string> {
  const queues = app.app.services.queues;
  await queues.enqueue({ queue: q, name, args: { from: 'test' }, maxAttempts: 1 });
  const [task] = await queues.takeReady({ queue: q, workerId: 'test-worker', max: 1 });
  await queues.fail({ queue: q, workerId: 'test-worker', task: task!, take: 0, error });
  return task!.id;
}
