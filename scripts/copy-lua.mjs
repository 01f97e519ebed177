// The build's second step: the Lua scripts that src/redis/scripts.ts loads at run time go beside the compiled code.
import { cpSync } from 'node:fs';

cpSync('src/redis', 'dist/redis', { recursive: true, filter: (from) => !/\.ts$/.test(from) });
