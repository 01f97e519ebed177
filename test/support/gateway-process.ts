/**
 * Runs the real gateway (`src/server.ts`) as a child process, as `npm start` does, for tests that need several
 * processes, signals, or the embedded Redis; and the worker, as `npm run worker` does. A process a test leaves
 * running is killed after it.
 */
import type { ChildProcess } from 'node:child_process';
import { disposeLater } from './dispose.js';
import { spawnEntry } from './entries.js';

export { runEntry } from './entries.js';

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote, for assertions and failure messages. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The gateway (its source, or with `entry` 'dist/server.js' the compiled one `npm start` runs), killed after the test;
 * `detached`: in a process group of its own (its pid is the group's id).
 */
export function spawnGateway(env: Record<string, string>, entry = 'src/server.ts', detached = false): ChildProcess {
  return killedLater(spawnEntry(entry, env, [], { detached }));
}

/** `npm run worker`, as a child process killed (if it still runs) after the test or file that made it. */
export function spawnWorker(env: Record<string, string>): ChildProcess {
  return killedLater(spawnEntry('src/worker/main.ts', env));
}

/** Stops `child` after the test or file that made it, if it still runs: SIGTERM, then SIGKILL after 10 s. */
function killedLater(child: ChildProcess): ChildProcess {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  disposeLater(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  return child;
}

/** Starts a gateway and resolves once it logs that it is listening. */
export async function startGateway(
  env: Record<string, string>,
  { entry, timeoutMs = 20_000, detached }: { entry?: string; timeoutMs?: number; detached?: boolean } = {},
): Promise<GatewayProcess> {
  const child = spawnGateway(env, entry, detached);
  let out = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gateway did not start within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:[^"]+)"[^\n]*"msg":"gateway listening"/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} during start:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}

/** Sends a signal and resolves with how the process ended and how long it took. */
export async function stopGateway(g: GatewayProcess, signal: NodeJS.Signals = 'SIGTERM') {
  const started = Date.now();
  g.child.kill(signal);
  const result = await g.exited;
  return { ...result, ms: Date.now() - started };
}
