/**
 * What `npm start` serves: the compiled JavaScript of `npm run build` (`npm test` builds before it runs the tests),
 * on the Node of the project's `node` dependency (Node 24 LTS, in node_modules/.bin, which npm scripts find first).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postGraphQL, redisEnv, signUp, uniquePrefix } from '../support/app.js';
import { ROOT } from '../support/entries.js';
import { startGateway, stopGateway } from '../support/gateway-process.js';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  scripts: Record<string, string>;
};

describe('the compiled gateway', () => {
  it('runs on the Node of the `node` dependency', () => {
    expect(process.versions.node).toBe(pkg.dependencies.node);
  });

  it('is built from the sources as they are (npm run build)', () => {
    const src = path.join(ROOT, 'src');
    const newest = Math.max(
      ...readdirSync(src, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(ts|lua)$/.test(f))
        .map((f) => statSync(path.join(src, f)).mtimeMs),
    );
    const built = statSync(path.join(ROOT, 'dist', 'server.js')).mtimeMs;
    expect(built, 'dist/ is older than src/: run npm run build (npm test does)').toBeGreaterThanOrEqual(newest);
  });

  it('serves GraphQL from dist/server.js, which `npm start` runs, and stops cleanly', async () => {
    const entry = /^node (\S+)$/.exec(pkg.scripts.start!)?.[1];
    expect(entry).toBe('dist/server.js');
    const g = await startGateway({ ...redisEnv(), KEY_PREFIX: uniquePrefix(), WORKER: 'off' }, { entry });
    const { token, username } = await signUp(g.url);
    expect((await postGraphQL(g.url, '{ me { username } }', {}, token)).data).toEqual({ me: { username } });
    expect((await stopGateway(g)).code).toBe(0);
  });
});
