/**
 * Fixtures dispose themselves (graphql-ws's tests/utils/tservers.ts `leftovers`): a fixture made inside a test is
 * disposed when that test finishes, one made outside (beforeAll) when its file's tests are done, last made first.
 */
import { afterAll, onTestFinished } from 'vitest';

const fileLeftovers: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (let dispose = fileLeftovers.pop(); dispose; dispose = fileLeftovers.pop()) await dispose();
});

/** Runs `dispose` once, after the current test or, outside one, after the file; returns it for an early call. */
export function disposeLater(dispose: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  const once = () => (done ??= dispose().then(() => undefined));
  try {
    onTestFinished(once);
  } catch {
    fileLeftovers.push(once);
  }
  return once;
}
