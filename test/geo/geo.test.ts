/**
 * IP-to-city: the three import layouts (the book's Latin-1 GeoLiteCity pair with its copyright line, MaxMind's
 * GeoLite2-City pair with IPv4 and IPv6 blocks, ip-location-db ranges), re-imports replacing the data, gaps,
 * input order, and the import:cities command itself.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geoCommands } from '../../src/redis/geo/commands.js';
import { keyspace } from '../../src/redis/keys.js';
import { CityImport } from '../../src/services/geo/geo-import.js';
import { redisEnv, startTestApp, type TestApp } from '../support/app.js';
import { runEntry } from '../support/gateway-process.js';

const CITIES = `query($ips: [String!]!) { citiesByIp(ips: $ips) { id city region country latitude longitude } }`;
const CITY = `query($ip: String!) { cityByIp(ip: $ip) { id city country latitude longitude } }`;

let t: TestApp;
let token: string;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  token = (await t.signUp()).token;
  dir = mkdtempSync(path.join(os.tmpdir(), 'rig-geo-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string, encoding: BufferEncoding = 'utf8'): string {
  const p = path.join(dir, name);
  writeFileSync(p, text, { encoding });
  return p;
}

const COPYRIGHT = 'Copyright (c) 2012 MaxMind LLC.  All Rights Reserved.\n';
const book = () => ({
  locations: file(
    'GeoLiteCity-Location.csv',
    COPYRIGHT +
      'locId,country,region,city,postalCode,latitude,longitude,metroCode,areaCode\n' +
      '17,"AU","07","Melbourne","",-37.8167,144.9667,,\n' +
      '223,"DE","","","",51.0000,9.0000,,\n' +
      '5000,"FR","A8","Saint-Étienne","42000",45.4333,4.4000,,\n',
    'latin1',
  ),
  blocks: file(
    'GeoLiteCity-Blocks.csv',
    COPYRIGHT +
      'startIpNum,endIpNum,locId\n' +
      '"16777216","16777471","17"\n' + // 1.0.0.0 - 1.0.0.255
      '"16777472","16778239","5000"\n' + // 1.0.1.0 - 1.0.3.255; then a gap from 1.0.4.0
      '"not","a row","1"\n' +
      '"3758096384","3758096639","223"\n', // 224.0.0.0 - 224.0.0.255: above 128.0.0.0, where the book's Java overflowed
    'latin1',
  ),
});

const geolite2 = () => ({
  locations: file(
    'GeoLite2-City-Locations-en.csv',
    'geoname_id,locale_code,continent_code,continent_name,country_iso_code,country_name,subdivision_1_iso_code,subdivision_1_name,subdivision_2_iso_code,subdivision_2_name,city_name,metro_code,time_zone,is_in_european_union\n' +
      '2077456,en,OC,Oceania,AU,Australia,,,,,,,Australia/Sydney,0\n' +
      '1850147,en,AS,Asia,JP,Japan,13,Tokyo,,,Tokyo,,Asia/Tokyo,0\n' +
      '2988507,en,EU,Europe,FR,France,IDF,Île-de-France,75,Paris,Paris,,Europe/Paris,1\n',
  ),
  blocks4: file(
    'GeoLite2-City-Blocks-IPv4.csv',
    'network,geoname_id,registered_country_geoname_id,represented_country_geoname_id,is_anonymous_proxy,is_satellite_provider,postal_code,latitude,longitude,accuracy_radius\n' +
      '1.0.0.0/24,2077456,2077456,,0,0,,-33.4940,143.2104,1000\n' +
      '81.0.0.0/16,2988507,3017382,,0,0,75001,48.8600,2.3400,20\n',
  ),
  blocks6: file(
    'GeoLite2-City-Blocks-IPv6.csv',
    'network,geoname_id,registered_country_geoname_id,represented_country_geoname_id,is_anonymous_proxy,is_satellite_provider,postal_code,latitude,longitude,accuracy_radius\n' +
      '2001:200::/32,1850147,1850147,,0,0,,35.6893,139.6899,100\n',
  ),
});

async function cities(ips: string[]) {
  const r = await t.gql<{
    citiesByIp: ({ city: string | null; country: string; region: string | null; latitude: number | null } | null)[];
  }>(CITIES, { ips }, token);
  expect(r.errors).toBeUndefined();
  return r.data!.citiesByIp;
}

describe('before any import', () => {
  it('says what to run instead of answering null (NOT_FOUND)', async () => {
    const fresh = await startTestApp();
    const r = await fresh.gql(CITY, { ip: '81.2.69.160' }, (await fresh.signUp()).token);
    expect(r.data).toEqual({ cityByIp: null });
    expect(r.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(r.errors?.[0]?.message).toMatch(/no city data has been imported yet: run `npm run import:cities`/);
  });
});

describe('import and lookup', () => {
  it("imports the book's GeoLiteCity pair (copyright line, quoted fields, Latin-1), keeping gaps empty", async () => {
    const f = book();
    const result = await new CityImport({ commands: geoCommands(t.redis, keyspace(t.config.keyPrefix)) }).run({
      blocks: [f.blocks],
      locations: f.locations,
    });
    expect(result).toEqual({ cities: 3, ranges4: 3, ranges6: 0, skipped: 1, bytes: expect.any(Number) as number });
    expect(result.bytes).toBeGreaterThan(0);
    expect(await cities(['1.0.0.1', '1.0.1.5', '1.0.3.255', '1.0.4.1', '224.0.0.7', '0.0.0.1'])).toEqual([
      { city: 'Melbourne', region: '07', country: 'AU', latitude: -37.8167, longitude: 144.9667, id: '17' },
      { city: 'Saint-Étienne', region: 'A8', country: 'FR', latitude: 45.4333, longitude: 4.4, id: '5000' },
      expect.objectContaining({ city: 'Saint-Étienne' }),
      null, // the gap: the book's lookup would have said Saint-Étienne
      expect.objectContaining({ country: 'DE', city: null }),
      null,
    ]);
  });

  it('imports the GeoLite2-City pair with IPv4 and IPv6 blocks, replacing the previous data', async () => {
    const f = geolite2();
    const result = await new CityImport({ commands: geoCommands(t.redis, keyspace(t.config.keyPrefix)) }).run({
      blocks: [f.blocks4, f.blocks6],
      locations: f.locations,
    });
    expect(result).toEqual({ cities: 3, ranges4: 2, ranges6: 1, skipped: 0, bytes: expect.any(Number) as number });
    expect(
      await cities(['1.0.0.1', '1.0.1.5', '81.0.200.1', '2001:200:1::5', '2001:300::1', '::ffff:1.0.0.9']),
    ).toEqual([
      // the block's own coordinates, not the location's
      { id: '2077456', city: null, region: null, country: 'AU', latitude: -33.494, longitude: 143.2104 },
      null, // only in the book's data, which is gone
      { id: '2988507', city: 'Paris', region: 'Île-de-France', country: 'FR', latitude: 48.86, longitude: 2.34 },
      { id: '1850147', city: 'Tokyo', region: 'Tokyo', country: 'JP', latitude: 35.6893, longitude: 139.6899 },
      null,
      expect.objectContaining({ id: '2077456' }), // IPv4-mapped IPv6 is IPv4
    ]);
  });

  it('imports ip-location-db ranges (addresses and decimals) and keeps the order of citiesByIp', async () => {
    const country = file('geolite2-country-ipv4.csv', '1.0.1.0,1.0.3.255,CN\n1.0.4.0,1.0.7.255,AU\n');
    const country6 = file('geolite2-country-ipv6.csv', '2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,JP\n');
    const numeric = file('geolite2-country-ipv4-num.csv', '16777216,16777471,US\n');
    await new CityImport({ commands: geoCommands(t.redis, keyspace(t.config.keyPrefix)) }).run({
      blocks: [country, country6, numeric],
    });
    const found = await cities(['2001:200::1', '9.9.9.9', '1.0.2.0', '1.0.5.5', '1.0.0.200', '1.0.8.0']);
    expect(found.map((c) => c?.country ?? null)).toEqual(['JP', null, 'CN', 'AU', 'US', null]);
    const one = await t.gql<{ cityByIp: { id: string; country: string } | null }>(CITY, { ip: '1.0.2.3' }, token);
    expect(one.data).toEqual({ cityByIp: { id: 'CN', city: null, country: 'CN', latitude: null, longitude: null } });
  });

  it('refuses what is not an address, and more than 1000 at once', async () => {
    const r = await t.gql(CITY, { ip: '1.2.3' }, token);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'ip' });
    const many = await t.gql(CITIES, { ips: ['1.1.1.1', 'nope'] }, token);
    expect(many.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'ips[1]' });
    const tooMany = await t.gql(CITIES, { ips: Array.from({ length: 1001 }, () => '1.1.1.1') }, token);
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.gql(CITY, { ip: '1.1.1.1' })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('npm run import:cities', () => {
  const run = (args: string[]) =>
    runEntry('src/cli/import-cities.ts', args, { ...redisEnv(), KEY_PREFIX: t.config.keyPrefix });

  it('imports with a progress bar and replaces the data', async () => {
    const f = book();
    const r = await run(['--blocks', f.blocks, '--locations', f.locations]);
    expect(r.stderr).toMatch(/GeoLiteCity-Blocks\.csv \[#+\] 100%/);
    expect(r.stderr).toMatch(/imported 3 IPv4 and 0 IPv6 ranges, 3 cities, skipped 1 malformed rows/);
    expect(r.code).toBe(0);
    expect((await cities(['1.0.1.5']))[0]).toMatchObject({ city: 'Saint-Étienne' });
  });

  it('prints its usage on --help, and refuses an unknown option in one line with it', async () => {
    const usage = 'usage: npm run import:cities [-- --blocks FILE [--blocks FILE...] [--locations FILE]]';
    expect(await run(['--help'])).toEqual({ code: 0, stdout: `${usage}\n`, stderr: '' });
    const r = await run(['--nope']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^import:cities: Unknown option '--nope'/)]);
    expect(r.stderr).toContain(usage);
  });

  it('fails in one line, changing nothing, on a file it cannot read', async () => {
    const junk = file('junk.csv', 'hello,world\n');
    const r = await run(['--blocks', junk]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^import:cities: .*junk\.csv: not a layout the importer knows/m);
    expect((await cities(['1.0.1.5']))[0]).toMatchObject({ city: 'Saint-Étienne' });
  });
});
