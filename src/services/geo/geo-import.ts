/**
 * Imports city data into the IP-to-city index, streaming, from the book's GeoLiteCity pair, MaxMind's GeoLite2-City
 * pair, the ip-location-db ranges (told apart by their first lines) and ip-location-db's city MaxMind DB files (the
 * default import, offline: src/services/geo/mmdb.ts), under `loading` keys swapped in by one script at the end.
 * Malformed rows are counted and skipped. The layouts: docs/access-logs.md.
 */
import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';
import { parse } from 'csv-parse';
import type { CityRecord, GeoCommands, StoredRange } from '../../redis/geo/commands.js';
import { parseBounds, parseCidr, type Range } from './ip.js';
import { mmdbRanges } from './mmdb.js';

export type Layout = 'book-blocks' | 'book-locations' | 'geolite2-blocks' | 'geolite2-locations' | 'ranges' | 'mmdb';

export interface ImportProgress {
  file: string;
  bytesRead: number;
  bytesTotal: number;
  rows: number;
}

export interface ImportResult {
  cities: number;
  ranges4: number;
  ranges6: number;
  skipped: number;
  /** What the imported data takes in Redis. */
  bytes: number;
}

/**
 * The read-write lock on the city data: an import holds it to write (so two imports never mix their loading keys,
 * and an import swaps only once the logs being located are done), each access-log processing to read.
 */
export const CITY_DATA_LOCK = 'geo:cities';

/** Members or fields per write; rows between waits for the writes. */
const BATCH = 1000;

/** Where a MaxMind DB's metadata starts: within its last 128 KiB. */
const MMDB_MARKER = Buffer.from('\xAB\xCD\xEFMaxMind.com', 'latin1');

/** Tells a file's layout from its first lines (a MaxMind DB from the marker of its metadata, near its end). */
export function sniff(file: string): { layout: Layout; encoding: BufferEncoding; headerLines: number } {
  const fd = openSync(file, 'r');
  const buffer = Buffer.alloc(128 * 1024);
  const size = statSync(file).size;
  const tail = readSync(fd, buffer, 0, buffer.length, Math.max(0, size - buffer.length));
  const isMmdb = buffer.subarray(0, tail).includes(MMDB_MARKER);
  const n = readSync(fd, buffer, 0, buffer.length, 0);
  closeSync(fd);
  if (isMmdb) return { layout: 'mmdb', encoding: 'binary', headerLines: 0 };
  const [first = '', second = ''] = buffer.subarray(0, n).toString('latin1').split(/\r?\n/);
  if (/^copyright/i.test(first)) {
    if (/^"?startIpNum"?,/i.test(second)) return { layout: 'book-blocks', encoding: 'latin1', headerLines: 2 };
    if (/^"?locId"?,/i.test(second)) return { layout: 'book-locations', encoding: 'latin1', headerLines: 2 };
  }
  if (/^network,/.test(first)) return { layout: 'geolite2-blocks', encoding: 'utf8', headerLines: 1 };
  if (/^geoname_id,/.test(first)) return { layout: 'geolite2-locations', encoding: 'utf8', headerLines: 1 };
  const [a = '', b = ''] = first.split(',');
  if (parseBounds(a, b)) return { layout: 'ranges', encoding: 'utf8', headerLines: 0 };
  throw new Error(
    `${file}: not a layout the importer knows (the book's GeoLiteCity, GeoLite2-City, start,end,country ranges, or ip-location-db's .mmdb)`,
  );
}

/** Writes sent without waiting, awaited together every BATCH rows; the first failure is thrown by drain(). */
class Writer {
  private writes: Promise<void>[] = [];
  private error: Error | undefined;

  add(write: Promise<unknown>): void {
    this.writes.push(
      write.then(
        () => undefined,
        (err: unknown) => void (this.error ??= err instanceof Error ? err : new Error(String(err))),
      ),
    );
  }

  async drain(): Promise<void> {
    await Promise.all(this.writes);
    this.writes = [];
    if (this.error) throw this.error;
  }
}

type LoadedRange = StoredRange & { latitude: number | null; longitude: number | null };

export interface CityImportDeps {
  commands: GeoCommands;
  onProgress?: (p: ImportProgress) => void;
}

export class CityImport {
  private readonly writer = new Writer();
  private readonly cityIds = new Set<string>();
  private ranges: Record<4 | 6, LoadedRange[]> = { 4: [], 6: [] };
  private cities: [string, CityRecord][] = [];
  private readonly result: ImportResult = { cities: 0, ranges4: 0, ranges6: 0, skipped: 0, bytes: 0 };
  private readonly commands: GeoCommands;
  private readonly onProgress: (p: ImportProgress) => void;

  constructor({ commands, onProgress = () => undefined }: CityImportDeps) {
    this.commands = commands;
    this.onProgress = onProgress;
  }

  /**
   * Loads the files (locations first), then replaces the live data with what was loaded; once `signal` aborts (the
   * lock on the city data was lost), it stops before the swap.
   */
  async run(files: { blocks: string[]; locations?: string | undefined; signal?: AbortSignal }): Promise<ImportResult> {
    if (files.blocks.length === 0) throw new Error('give at least one --blocks file');
    const layouts = files.blocks.map((f) => ({ file: f, ...sniff(f) }));
    const needLocations = layouts.some((l) => l.layout !== 'ranges' && l.layout !== 'mmdb');
    if (needLocations && !files.locations) throw new Error('--locations is needed with GeoLiteCity or GeoLite2 blocks');
    for (const l of layouts)
      if (l.layout.endsWith('locations')) throw new Error(`${l.file} is a locations file; pass it with --locations`);
    await this.commands.clearLoading(); // a crashed import's
    if (files.locations) {
      const l = sniff(files.locations);
      if (!l.layout.endsWith('locations')) throw new Error(`${files.locations} is not a locations file`);
      await this.read(files.locations, l, (row) => this.location(l.layout, row));
    }
    for (const l of layouts) {
      if (l.layout === 'mmdb') await this.readMmdb(l.file);
      else await this.read(l.file, l, (row) => this.block(l.layout, row));
    }
    this.flushCities();
    this.flushRanges(4);
    this.flushRanges(6);
    await this.writer.drain();
    if (this.result.ranges4 + this.result.ranges6 === 0)
      throw new Error('no range could be read: the data in place is left as it is');
    files.signal?.throwIfAborted();
    await this.commands.swapCities();
    this.result.bytes = await this.commands.bytes();
    return this.result;
  }

  private async read(
    file: string,
    sniffed: { encoding: BufferEncoding; headerLines: number },
    onRow: (row: string[]) => void,
  ): Promise<void> {
    const bytesTotal = statSync(file).size;
    const input = createReadStream(file, { encoding: sniffed.encoding });
    let bytesRead = 0;
    input.on('data', (chunk) => (bytesRead += Buffer.byteLength(chunk as string, sniffed.encoding)));
    const rows = input.pipe(
      parse({
        from_line: sniffed.headerLines + 1,
        relax_column_count: true,
        relax_quotes: true,
        skip_empty_lines: true,
        trim: true,
      }),
    );
    let count = 0;
    for await (const row of rows as AsyncIterable<string[]>) {
      onRow(row);
      if (++count % BATCH === 0) {
        await this.pending();
        this.onProgress({ file, bytesRead, bytesTotal, rows: count });
      }
    }
    this.onProgress({ file, bytesRead: bytesTotal, bytesTotal, rows: count });
  }

  /** A MaxMind DB of ip-location-db's city layout: its ranges, each with its place. */
  private async readMmdb(file: string): Promise<void> {
    const bytesTotal = statSync(file).size;
    let count = 0;
    for (const { range, data, done } of mmdbRanges(file)) {
      this.addPlace(range, {
        country: data.country_code ?? '',
        region: data.state1 ?? '',
        city: data.city ?? '',
        latitude: data.latitude,
        longitude: data.longitude,
      });
      if (++count % BATCH === 0) {
        await this.pending();
        this.onProgress({ file, bytesRead: Math.round(done * bytesTotal), bytesTotal, rows: count });
      }
    }
    this.onProgress({ file, bytesRead: bytesTotal, bytesTotal, rows: count });
  }

  /** Sends full batches. */
  private async pending(): Promise<void> {
    if (this.cities.length >= BATCH) this.flushCities();
    if (this.ranges[4].length >= BATCH) this.flushRanges(4);
    if (this.ranges[6].length >= BATCH) this.flushRanges(6);
    await this.writer.drain();
  }

  private flushCities(): void {
    if (this.cities.length === 0) return;
    const cities = this.cities;
    this.cities = [];
    this.writer.add(this.commands.loadCities({ cities }));
  }

  private flushRanges(family: 4 | 6): void {
    const ranges = this.ranges[family];
    if (ranges.length === 0) return;
    this.ranges[family] = [];
    this.writer.add(this.commands.loadRanges({ family, ranges }));
  }

  private addCity(id: string, record: CityRecord): void {
    if (this.cityIds.has(id)) return;
    this.cityIds.add(id);
    this.cities.push([id, record]);
    this.result.cities++;
  }

  private addRange(range: Range | null, id: string, latitude: unknown = '', longitude: unknown = ''): void {
    if (!range || !id || id.includes('|')) {
      this.result.skipped++;
      return;
    }
    this.ranges[range.family].push({
      start: range.start,
      end: range.end,
      id,
      latitude: coordinate(latitude),
      longitude: coordinate(longitude),
    });
    if (range.family === 4) this.result.ranges4++;
    else this.result.ranges6++;
  }

  /**
   * A range of a place given by its names (the ranges layout, the .mmdb files): the place is a city, kept once,
   * whose id is "country/region/city" (the country alone when the data names no more); the range keeps its own
   * coordinates. A range without a country is skipped.
   */
  private addPlace(
    range: Range | null,
    p: { country: string; region: string; city: string; latitude: unknown; longitude: unknown },
    countryOnly = false,
  ): void {
    if (!range || !p.country) return void this.result.skipped++;
    const id = countryOnly ? p.country : `${p.country}/${p.region}/${p.city}`;
    this.addCity(id, {
      country: p.country,
      region: p.region || null,
      city: p.city || null,
      latitude: coordinate(p.latitude),
      longitude: coordinate(p.longitude),
    });
    this.addRange(range, id, p.latitude, p.longitude);
  }

  private location(layout: Layout, r: string[]): void {
    const text = (s: string | undefined) => (s ? s : null);
    if (layout === 'book-locations') {
      const [id, country, region, city, , lat, lon] = r;
      if (!id || !country) return void this.result.skipped++;
      this.addCity(id, {
        country,
        region: text(region),
        city: text(city),
        latitude: coordinate(lat),
        longitude: coordinate(lon),
      });
      return;
    }
    // geoname_id,locale_code,continent_code,continent_name,country_iso_code,country_name,subdivision_1_iso_code,
    // subdivision_1_name,subdivision_2_iso_code,subdivision_2_name,city_name,...
    const [id, , continent, , country, , , region, , , city] = r;
    if (!id || !(country || continent)) return void this.result.skipped++;
    this.addCity(id, {
      country: (country || continent)!,
      region: text(region),
      city: text(city),
      latitude: null,
      longitude: null,
    });
  }

  private block(layout: Layout, r: string[]): void {
    if (layout === 'book-blocks') {
      const [first = '', last = '', id = ''] = r;
      return this.addRange(parseBounds(first, last), id);
    }
    if (layout === 'geolite2-blocks') {
      // network,geoname_id,registered_country_geoname_id,represented_country_geoname_id,is_anonymous_proxy,
      // is_satellite_provider,postal_code,latitude,longitude,accuracy_radius
      const [network = '', id, registered, , , , , lat, lon] = r;
      return this.addRange(parseCidr(network), id || registered || '', lat, lon);
    }
    // start,end,country[,state1,state2,city,postcode,latitude,longitude,...]
    const [first = '', last = '', country = '', region = '', , city = '', , latitude, longitude] = r;
    this.addPlace(parseBounds(first, last), { country, region, city, latitude, longitude }, r.length < 9);
  }
}

/** A latitude or longitude as stored: a finite number to 4 decimals (about 11 m); null for anything else. */
function coordinate(value: unknown): number | null {
  if (value === '' || value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? Number(n.toFixed(4)) : null;
}
