/**
 * The README's first walk, run as written on a new deployment: its shell steps in one bash session (as a newcomer
 * types them, `npm run admin` and `npm run import:cities` included), against the compiled gateway `npm start` runs;
 * its GraphiQL blocks operation by operation with the token of the user each names, a subscription over
 * graphql-ws. Standalone only, on a private Redis: the walk imports the whole city data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { eventually, postGraphQL, uniquePrefix, wsClient } from '../support/clients.js';
import { disposeLater } from '../support/dispose.js';
import { ROOT } from '../support/entries.js';
import { startGateway } from '../support/gateway-process.js';
import { readmeWalk } from '../support/readme.js';
import { freePort, startRedisProcess } from '../support/redis-servers.js';

/** One bash session: what a block prints, and its last command's status. */
class Shell {
  private out = '';
  private readonly proc: ChildProcess;

  constructor(env: Record<string, string>) {
    this.proc = spawn('bash', ['--norc', '--noprofile'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => (this.out += chunk.toString());
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
    disposeLater(() => Promise.resolve(void this.proc.kill()));
  }

  async run(script: string): Promise<{ status: number; output: string }> {
    const marker = randomUUID();
    const from = this.out.length;
    this.proc.stdin!.write(`${script}\necho "${marker} $?"\n`);
    const done = new RegExp(`${marker} (\\d+)\\n`);
    if (!(await eventually(() => Promise.resolve(done.test(this.out.slice(from))), 60_000, 20)))
      throw new Error(`the walk's step did not finish:\n${script}\n${this.out.slice(from)}`);
    const all = this.out.slice(from);
    const end = done.exec(all)!;
    return { status: Number(end[1]), output: all.slice(0, end.index) };
  }
}

type Answer = { data?: Record<string, unknown> | null; errors?: { message: string }[] };

describe.runIf(inject('redis').kind === 'standalone')("the README's first walk", () => {
  it('runs as written, every step answering without an error', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-walk-'));
    disposeLater(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const redis = await startRedisProcess(dir, await freePort());
    disposeLater(() => redis.stop());
    // The walk writes access.log where it runs, the repository: one already there is put back afterwards.
    const log = path.join(ROOT, 'access.log');
    const saved = mkdtempSync(path.join(os.tmpdir(), 'rig-walk-saved-'));
    if (existsSync(log)) renameSync(log, path.join(saved, 'access.log'));
    disposeLater(() => {
      if (existsSync(path.join(saved, 'access.log'))) renameSync(path.join(saved, 'access.log'), log);
      else rmSync(log, { force: true });
      rmSync(saved, { recursive: true, force: true });
      return Promise.resolve();
    });
    const env = { REDIS_URL: `redis://127.0.0.1:${redis.port}`, KEY_PREFIX: uniquePrefix(), LOG_POLL_MS: '100' };
    const g = await startGateway(env, { entry: 'dist/server.js' });
    const host = new URL(g.url).host;
    const shell = new Shell({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env });

    const answers = new Map<string, Answer>();
    const delivered: string[] = [];
    const shown: string[] = [];
    for (const step of readmeWalk()) {
      if (step.kind === 'sh') {
        const { status, output } = await shell.run(step.script.replaceAll('localhost:4000', host));
        shown.push(output);
        expect(status, `${step.script}\n${output}`).toBe(0);
        expect(output, step.script).not.toContain('"errors"');
        continue;
      }
      const token = (await shell.run(`echo "$${step.user.toUpperCase()}"`)).output.trim();
      expect(token, `the token of ${step.user}`).toMatch(/^[A-Za-z0-9_-]{43}$/);
      for (const operation of step.operations) {
        const name = /^(?:query|mutation|subscription) (\w+)/.exec(operation)?.[1];
        expect(name, `an operation of the walk without a name: ${operation}`).toBeDefined();
        if (operation.startsWith('subscription')) {
          const client = wsClient(g.url.replace('http', 'ws'), token);
          disposeLater(async () => client.dispose());
          client.subscribe<{ messageAdded: { text: string } }>(
            { query: operation },
            {
              next: (r) => void (r.data ? delivered.push(r.data.messageAdded.text) : shown.push(JSON.stringify(r))),
              error: (err) => shown.push(String(err)),
              complete: () => undefined,
            },
          );
          continue;
        }
        const targetingId = (answers.get('TargetAd')?.data?.targetAd as { targetingId?: string } | undefined)
          ?.targetingId;
        const query = operation.replace('<targetingId from TargetAd>', targetingId ?? '');
        // Visits are counted by the processors a moment after the upload.
        const ask = () => postGraphQL<Record<string, unknown>>(g.url, query, {}, token);
        let r: Answer = await ask();
        if (name === 'Visits')
          await eventually(async () => ((r = await ask()).data?.dailyVisits as unknown[] | undefined)?.length === 2);
        expect(r.errors, operation).toBeUndefined();
        answers.set(name!, r);
      }
    }
    const data = (name: string) => answers.get(name)?.data;
    expect(shown.join('\n')).toMatch(/"me":\{"username":"alice","isAdmin":false\}/);
    expect(shown.join('\n')).toMatch(/city data: GeoLite2 by MaxMind/);
    expect(data('CreateChat')).toEqual({ createChat: { id: '1', memberCount: 3 } });
    expect(await eventually(() => Promise.resolve(delivered.length === 2))).toBe(true);
    expect(delivered).toEqual(['hello', 'lunch at noon?']);
    expect(data('City')).toMatchObject({ cityByIp: { city: 'Bracknell', region: 'England', country: 'GB' } });
    expect(data('Visits')).toEqual({
      dailyVisits: [
        { place: 'GB/England/Bracknell', count: 2 },
        { place: 'GB/England/Plymouth', count: 1 },
      ],
    });
    const ids = (name: string) =>
      ((data(name)?.searchDocuments as { documents: { id: string }[] }).documents ?? []).map((d) => d.id);
    expect(ids('BothWords').sort()).toEqual(['lua', 'redis-intro']);
    expect(ids('Synonym').sort()).toEqual(['lua', 'redis-intro']);
    expect(ids('Exclude')).toEqual(['redis-intro']);
    expect(ids('Ranked')[0]).toBe('lua');
    expect(data('TargetAd')).toMatchObject({ targetAd: { matchedTerms: ['trail', 'running'], ad: { id: 'shoes' } } });
    expect(data('Click')).toEqual({ recordClick: true });
  }, 180_000);
});
