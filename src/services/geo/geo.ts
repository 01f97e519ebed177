/**
 * IP-to-city lookup (the book's chapter 5 find_city_by_ip, without its defect): ranges keep their last address,
 * so an address in a gap between ranges finds nothing; IPv4 and IPv6 each have their own index. Lookups issued
 * together (citiesByIp, or several fields of one request) go to Redis as one pipeline through a DataLoader.
 * The data comes from `npm run import:cities` (src/services/geo/geo-import.ts).
 */
import DataLoader from 'dataloader';
import { badInput } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/geo/commands.js';
import type { CityByIpReply } from '../../redis/geo/commands.js';
import type { GeoKeys } from '../../redis/geo/keys.js';
import { parseAddress, type Address } from './ip.js';

export interface City {
  id: string;
  city: string | null;
  region: string | null;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

/** What the importer stores per city id. */
export interface CityRecord {
  city: string | null;
  region: string | null;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

/** Addresses one citiesByIp call may ask for. */
export const IPS_MAX = 1000;

const number = (s: string): number | null => (s === '' ? null : Number(s));

export class GeoService {
  private readonly loader: DataLoader<string, City | null>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: GeoKeys,
  ) {
    this.loader = new DataLoader((addresses) => this.lookup(addresses), { cache: false });
  }

  async cityByIp(ip: string): Promise<City | null> {
    return this.loader.load(key(address('ip', ip)));
  }

  /** The city of each address, in the order given (null where none). */
  async citiesByIp(ips: readonly string[]): Promise<(City | null)[]> {
    if (ips.length > IPS_MAX) throw badInput('ips', `at most ${IPS_MAX} addresses`);
    const keys = ips.map((ip, i) => key(address(`ips[${i}]`, ip)));
    const cities = await this.loader.loadMany(keys);
    return cities.map((c) => {
      if (c instanceof Error) throw c;
      return c;
    });
  }

  private async lookup(addresses: readonly string[]): Promise<(City | null)[]> {
    const pipeline = this.redis.pipeline();
    for (const a of addresses)
      commands.cityByIp(pipeline, this.keys, { family: a.startsWith('4') ? 4 : 6, hex: a.slice(2) });
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, found]) => {
      if (err) throw err;
      if (!found) return null;
      const [id, lat, lon, json] = found as NonNullable<CityByIpReply>;
      if (json === null) return null;
      const record = JSON.parse(json) as CityRecord;
      return { id, ...record, latitude: number(lat) ?? record.latitude, longitude: number(lon) ?? record.longitude };
    });
  }
}

function address(argument: string, ip: string): Address {
  const a = parseAddress(ip);
  if (!a) throw badInput(argument, `"${ip.slice(0, 64)}" is not an IPv4 or IPv6 address`);
  return a;
}

/** The DataLoader's key: the family and the address ("4:0a000001"). */
function key(a: Address): string {
  return `${a.family}:${a.hex}`;
}
