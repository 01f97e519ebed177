/**
 * The read-write lock on the city data, in the product: `npm run import:cities` takes it to write, so it waits for
 * the access-log processing that holds it to read (and new processing queues behind it), and swaps only then.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CITY_DATA_LOCK } from '../../src/services/geo/geo-import.js';
import { eventually, redisEnv, startTestApp, type TestApp } from '../support/app.js';
import { runEntry } from '../support/entries.js';
import { keysOf } from '../support/keys.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

/** A city file of the ip-location-db city layout placing 10.0.0.0/24 in `city`. */
function cityFile(city: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-city-lock-'));
  const file = path.join(dir, 'cities.csv');
  writeFileSync(file, `10.0.0.0,10.0.0.255,FR,Ile-de-France,,${city},75001,48.85,2.35\n`);
  return file;
}

describe('city data lock', () => {
  it('read-write: a city import waits for the log processing that reads the cities, and new processing queues behind it', async () => {
    const rw = t.app.services.rwlocks;
    const geo = t.app.services.geo;
    const run = (file: string) =>
      runEntry('src/cli/import-cities.ts', ['--blocks', file], { ...redisEnv(), KEY_PREFIX: t.config.keyPrefix });
    expect((await run(cityFile('Paris'))).code).toBe(0);
    // A processor locating an upload holds the city data to read, as AccessLogService.processPending does.
    const processing = (await rw.acquire({ name: CITY_DATA_LOCK, mode: 'read', leaseMs: 60_000 }))!;
    expect(processing).not.toBeNull();
    const importing = run(cityFile('Lyon'));
    const writers = keysOf(t.config.keyPrefix).rwlock(CITY_DATA_LOCK).writers;
    expect(await eventually(async () => (await t.redis.zcard(writers)) === 1, 20_000)).toBe(true); // it waits
    // Meanwhile the next processing is refused (it goes on at a later poll), and lookups still see the old data.
    expect(await rw.acquire({ name: CITY_DATA_LOCK, mode: 'read', leaseMs: 60_000 })).toBeNull();
    expect(await geo.cityByIp({ ip: '10.0.0.7' })).toMatchObject({ city: 'Paris' });
    expect(await rw.release(processing)).toBe(true);
    const done = await importing;
    expect(done.code, done.stderr).toBe(0);
    expect(await geo.cityByIp({ ip: '10.0.0.7' })).toMatchObject({ city: 'Lyon' });
    // The import let go: processing reads again.
    const next = await rw.acquire({ name: CITY_DATA_LOCK, mode: 'read', leaseMs: 1000 });
    expect(next).not.toBeNull();
    await rw.release(next!);
  }, 60_000);
});
