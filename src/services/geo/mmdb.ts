/**
 * The ranges of a MaxMind DB (.mmdb) file, in address order: its search tree walked depth first (mmdb-lib reads
 * records but has no walk), each data record decoded once by mmdb-lib, adjacent networks with the same record
 * joined into one range. The layout of the records is ip-location-db's city files': country_code, state1, state2,
 * city, postcode, latitude, longitude, timezone.
 */
import { readFileSync } from 'node:fs';
import { Reader, type Response } from 'mmdb-lib';
import { toHex, type Family, type Range } from './ip.js';

/** A record of ip-location-db's city mmdb files. */
export interface CityData {
  country_code?: string;
  state1?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
}

export interface MmdbRange {
  range: Range;
  data: CityData;
  /** How far through the file's address space the walk is (0 to 1), for progress. */
  done: number;
}

/** The bytes of a search tree node's two records, by record size (bits). */
const READERS: Record<number, (db: Buffer, offset: number) => [number, number]> = {
  24: (db, o) => [db.readUIntBE(o, 3), db.readUIntBE(o + 3, 3)],
  28: (db, o) => [
    ((db[o + 3]! & 0xf0) << 20) | db.readUIntBE(o, 3),
    ((db[o + 3]! & 0x0f) << 24) | db.readUIntBE(o + 4, 3),
  ],
  32: (db, o) => [db.readUInt32BE(o), db.readUInt32BE(o + 4)],
};

/** Every range of the file with its record, in address order. */
export function* mmdbRanges(file: string): Generator<MmdbRange> {
  const db = readFileSync(file);
  const reader = new Reader<Response>(db);
  const { nodeCount, recordSize, ipVersion } = reader.metadata;
  const read = READERS[recordSize];
  if (!read) throw new Error(`${file}: record size ${recordSize} is not one of MaxMind DB's`);
  const family: Family = ipVersion === 4 ? 4 : 6;
  const bits = family === 4 ? 32 : 128;
  const nodeBytes = (recordSize * 2) / 8;
  const decoded = new Map<number, CityData>();
  const decode = (pointer: number, first: bigint): CityData => {
    let data = decoded.get(pointer);
    if (!data) {
      data = (reader.get(address(first, family)) ?? {}) as CityData;
      if (decoded.size === 0 && typeof data.country_code !== 'string')
        throw new Error(
          `${file}: its records are not ip-location-db's (country_code, state1, city, ...): the importer reads ` +
            "ip-location-db's city .mmdb files, and MaxMind's own data as its CSV pair",
        );
      decoded.set(pointer, data);
    }
    return data;
  };

  let open: { start: bigint; end: bigint; pointer: number } | undefined;
  const close = (): MmdbRange => {
    const { start, end, pointer } = open!;
    return {
      range: { family, start: toHex(start, family), end: toHex(end, family) },
      data: decode(pointer, start),
      done: Number(end) / 2 ** bits,
    };
  };
  // Depth first, the right branch pushed before the left, and a leaf pushed like a subtree: what is popped comes
  // in address order.
  type Item = { node: number; depth: number; prefix: bigint } | { pointer: number; start: bigint; end: bigint };
  const stack: Item[] = [{ node: 0, depth: 0, prefix: 0n }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if ('pointer' in item) {
      if (open?.pointer === item.pointer && open.end + 1n === item.start) {
        open.end = item.end;
        continue;
      }
      if (open) yield close();
      open = item;
      continue;
    }
    const [left, right] = read(db, item.node * nodeBytes);
    for (const [bit, value] of [
      [1n, right],
      [0n, left],
    ] as const) {
      const depth = item.depth + 1;
      const prefix = (item.prefix << 1n) | bit;
      if (value < nodeCount) stack.push({ node: value, depth, prefix });
      else if (value > nodeCount) {
        // A data record; nodeCount itself means no data for the network.
        const host = BigInt(bits - depth);
        const start = prefix << host;
        stack.push({ pointer: value, start, end: start | ((1n << host) - 1n) });
      }
    }
  }
  if (open) yield close();
}

function address(value: bigint, family: Family): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join('.');
  return toHex(value, 6).match(/.{4}/g)!.join(':');
}
