/**
 * Runs the real gateway (`src/server.ts`) as a child process, as `npm start` does, for tests that need
 * several processes, signals, or the embedded Redis; the worker (`src/worker/main.ts`), as `npm run worker` does;
 * and the command-line tools.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LIMITS_OFF } from './limits.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote, for assertions and failure messages. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnGateway(env: Record<string, string>): ChildProcess {
  return spawnEntry('src/server.ts', env);
}

/** `npm run worker`, as a child process. */
export function spawnWorker(env: Record<string, string>): ChildProcess {
  return spawnEntry('src/worker/main.ts', env);
}

/** Runs a command-line entry (`npm run admin`, `npm run import:cities`) to its end. */
export function runEntry(
  entry: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnEntry(entry, env, args);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function spawnEntry(entry: string, env: Record<string, string>, args: string[] = []): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      ...LIMITS_OFF,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts a gateway and resolves once it logs that it is listening. */
export async function startGateway(env: Record<string, string>, timeoutMs = 20_000): Promise<GatewayProcess> {
  const child = spawnGateway(env);
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
