/** The product's entries as child processes (`npm start`, `npm run worker`, the command-line tools); no vitest here. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LIMITS_OFF } from './limits.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `entry` as a child process on this Node, with a minimal environment: a source entry (src/server.ts,
 * src/worker/main.ts, src/cli/*.ts) under tsx, as `npm run dev` runs it; a compiled one (dist/....js, made by
 * `npm run build`) as `npm start` runs it. `detached`: in a process group of its own, as a shell runs a command, so
 * that a test can signal the group as Ctrl-C does.
 */
export function spawnEntry(
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
  { detached = false }: { detached?: boolean } = {},
): ChildProcess {
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return spawn(process.execPath, [...loader, entry, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      ...LIMITS_OFF,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
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
