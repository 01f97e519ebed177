// npm run build: dist/ from nothing (a script renamed or deleted must not linger: src/redis/scripts.ts loads every
// .lua it finds), the TypeScript compiled, then the Lua scripts that src/redis/scripts.ts loads put beside it, and
// the dashboard's client bundled (scripts/dashboard.mjs).
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import process from 'node:process';
import { bundleDashboard } from './dashboard.mjs';

rmSync('dist', { recursive: true, force: true });
const tsc = spawnSync('tsc', ['-p', 'tsconfig.build.json'], { stdio: 'inherit', shell: process.platform === 'win32' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
cpSync('src/redis', 'dist/redis', { recursive: true, filter: (from) => !/\.ts$/.test(from) });
await bundleDashboard();
