/**
 * Loads every Lua script in ./lua as an ioredis command (EVALSHA with EVAL fallback, pipelinable).
 * Each file's header says its KEYS, ARGV and return values; the declarations below give them types.
 */
import { readFileSync } from 'node:fs';
import type { Cluster, Redis, Result } from 'ioredis';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    userCreate(profileKey: string, username: string, passwordHash: string, createdAt: number): Result<0 | 1, Context>;
  }
}

const SCRIPTS = {
  userCreate: { file: 'user-create.lua', numberOfKeys: 1 },
} as const satisfies Record<string, { file: string; numberOfKeys: number }>;

const sources = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, { file, numberOfKeys }]) => [
    name,
    { numberOfKeys, lua: readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8') },
  ]),
);

export function defineScripts(client: Redis | Cluster): void {
  for (const [name, definition] of Object.entries(sources)) client.defineCommand(name, definition);
}
