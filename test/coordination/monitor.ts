/**
 * What clients send that names one key (MONITOR on every master of the test Redis, in order): each command as its
 * arguments, the command's name first, and whether a script ran it. A plain socket reads the monitor: ioredis's
 * monitor mode reads the lines Redis sends while it disconnects as replies, and throws.
 */
import { connect } from 'node:net';
import type { RedisClient } from '../../src/redis/clients.js';
import { disposeLater } from '../support/dispose.js';

export interface Monitored {
  args: string[];
  /** Run by a script (MONITOR's "[0 lua]"), not sent by a client. */
  lua: boolean;
}

/** Starts monitoring: `seen()` is every command naming `key` so far (as its first key, or its script's first key). */
export async function monitorKey(redis: RedisClient, key: string): Promise<{ seen: () => Monitored[] }> {
  const seen: Monitored[] = [];
  for (const node of 'nodes' in redis ? redis.nodes('master') : [redis]) {
    const socket = connect({ host: node.options.host ?? '127.0.0.1', port: node.options.port! });
    disposeLater(() => Promise.resolve(socket.destroy()));
    socket.setEncoding('utf8');
    let rest = '';
    let ok: () => void;
    const monitoring = new Promise<void>((resolve) => (ok = resolve));
    socket.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\r\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (line === '+OK') ok();
        // +<time> [<db> <client or "lua">] "evalsha" "<sha>" "1" "<key>" "<first argument>" ... (or "eval"
        // "<source>" ...: a client's first run of a script in a pipeline); "set" "<key>" ...
        const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
        const script = /^eval(sha)?$/i.test(args[0] ?? '');
        if ((script ? args[3] : args[1]) === key) seen.push({ args, lua: / lua\] /.test(line) });
      }
    });
    socket.write('MONITOR\r\n');
    await monitoring;
  }
  return { seen: () => [...seen] };
}
