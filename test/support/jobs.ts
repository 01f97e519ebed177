/** A periodic job run by several workers at once, to see that its lock lets one run at a time. */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../src/logger.js';
import type { Services } from '../../src/services/index.js';
import { Worker } from '../../src/worker/worker.js';
import { eventually, uniqueName } from './clients.js';

/**
 * Starts a worker on each of `services` with one job every 50 ms that holds itself 120 ms (time another worker's run
 * would overlap), until it has run more than 5 times (false if not within `timeoutMs`); then stops them. `during`
 * is called in each run, with the job's name. Returns the most runs at once and what `during` gave.
 */
export async function runJobOnWorkers<T>(
  services: Services[],
  { during, timeoutMs = 5000 }: { during?: (job: string) => Promise<T>; timeoutMs?: number } = {},
): Promise<{ enough: boolean; most: number; seen: T[] }> {
  let inside = 0;
  let most = 0;
  let runs = 0;
  const seen: T[] = [];
  const job = {
    name: uniqueName('job'),
    everyMs: 50,
    run: async () => {
      most = Math.max(most, ++inside);
      runs++;
      if (during) seen.push(await during(job.name));
      await sleep(120);
      inside--;
    },
  };
  const log = createLogger('silent');
  const options = { concurrency: 1, heartbeatMs: 100, timeoutMs: 500, pollMs: 50 };
  const workers = services.map((s) => new Worker({ ...s, handlers: [], jobs: [job], options, log }));
  workers.forEach((w) => w.start());
  const enough = await eventually(() => Promise.resolve(runs > 5), timeoutMs);
  await Promise.all(workers.map((w) => w.stop(500)));
  return { enough, most, seen };
}
