/**
 * The task queues (`queues`): ready, delayed, running and failed per queue, the newest failed tasks of each with a
 * button that puts one back in its queue (`retryFailedTask`).
 */
import { gql, type ApiError } from '../api.js';
import { h, table } from '../dom.js';
import type { PanelSpec } from '../panel.js';

const FAILED_SHOWN = 10;

interface FailedTask {
  id: string;
  name: string;
  error: string;
  failedAt: string;
  attempts: number;
}
interface Queue {
  name: string;
  ready: number;
  delayed: number;
  running: number;
  failed: number;
  failedTasks: FailedTask[];
}

export function queuesPanel(refresh: () => void): PanelSpec {
  /** What the last retry did, shown until the next one. */
  let said: { text: string; error: boolean } | undefined;
  const retry = async (queue: string, task: FailedTask, button: HTMLButtonElement) => {
    button.disabled = true;
    try {
      const { retryFailedTask } = await gql<{ retryFailedTask: boolean }>(
        'mutation DashboardRetry($queue: String!, $id: ID!) { retryFailedTask(queue: $queue, id: $id) }',
        { queue, id: task.id },
      );
      said = retryFailedTask
        ? { text: `Task ${task.id} (${task.name}) is back in ${queue}.`, error: false }
        : { text: `Task ${task.id} was no longer failed (retried already).`, error: false };
    } catch (err) {
      said = { text: `Could not retry ${task.id}: ${(err as ApiError).message}`, error: true };
    }
    refresh();
  };
  return {
    id: 'queues',
    title: 'Task queues',
    everyMs: 3000,
    empty: () => 'No queues: they appear with the workers that handle them (npm start runs one unless WORKER=off).',
    async load(body) {
      const { queues } = await gql<{ queues: Queue[] }>(
        `query DashboardQueues { queues { name ready delayed running failed failedTasks(first: ${FAILED_SHOWN}) { id name error failedAt attempts } } }`,
      );
      if (said)
        body.append(
          h('p', { className: said.error ? 'error' : 'note', role: said.error ? 'alert' : 'status' }, said.text),
        );
      if (queues.length === 0) return false;
      body.append(
        table(
          ['queue', 'ready', 'delayed', 'running', 'failed'],
          queues.map((q) => [q.name, q.ready, q.delayed, q.running, q.failed]),
          { className: 'queues' },
        ),
      );
      const failed = queues.flatMap((q) => q.failedTasks.map((task) => ({ queue: q.name, task })));
      body.append(h('h3', {}, 'Failed tasks'));
      if (failed.length === 0) {
        body.append(
          h('p', { className: 'empty' }, 'No failed tasks: a task lands here when it used all its attempts.'),
        );
        return true;
      }
      body.append(
        table(
          ['queue', 'task', 'id', 'attempts', 'failed at', 'error', ''],
          failed.map(({ queue, task }) => {
            const button: HTMLButtonElement = h('button', { type: 'button', 'data-task': task.id }, 'Retry');
            button.addEventListener('click', () => void retry(queue, task, button));
            return [
              queue,
              task.name,
              task.id,
              task.attempts,
              new Date(task.failedAt).toLocaleString(),
              task.error,
              button,
            ];
          }),
          { className: 'failed' },
        ),
      );
      return true;
    },
  };
}
