/**
 * IP-to-city lookup (the book's chapter 5 find_city_by_ip, without its defect): ranges keep their last address,
 * so an address in a gap between ranges finds nothing; IPv4 and IPv6 each have their own index. Lookups issued
 * together (citiesByIp, or several fields of one request) go to Redis as one pipeline through a DataLoader.
 * Bulk readers (the access-log processors) look up batches of addresses in one pipeline each (`locate()`).
 * The data comes from `npm run import:cities` (src/services/geo/geo-import.ts).
 */
import DataLoader from 'dataloader';
import { AppError, badInput } from '../../errors.js';
import type { CityRecord, GeoCommands } from '../../redis/geo/commands.js';
import { parseAddress, type Address } from './ip.js';

export type { CityRecord };

export interface City extends CityRecord {
  id: string;
}

const NO_DATA = new AppError(
  'NOT_FOUND',
  'no city data has been imported yet: run `npm run import:cities` (GeoLite2 city data, offline) where the gateway runs',
);

/** Addresses one pipeline of locate() looks up. */
const LOCATE_BATCH = 1000;

/** Addresses one citiesByIp call may ask for. */
export const IPS_MAX = 1000;

export class GeoService {
  private readonly loader: DataLoader<Address, City | null>;
  private readonly commands: GeoCommands;

  constructor(deps: { commands: GeoCommands }) {
    this.commands = deps.commands;
    this.loader = new DataLoader((addresses) => this.lookup(addresses), { cache: false });
  }

  async cityByIp({ ip }: { ip: string }): Promise<City | null> {
    return this.loader.load(address('ip', ip));
  }

  /** The city of each address, in the order given (null where none). */
  async citiesByIp({ ips }: { ips: readonly string[] }): Promise<(City | null)[]> {
    if (ips.length > IPS_MAX) throw badInput('ips', `at most ${IPS_MAX} addresses`);
    const cities = await this.loader.loadMany(ips.map((ip, i) => address(`ips[${i}]`, ip)));
    return cities.map((c) => {
      if (c instanceof Error) throw c;
      return c;
    });
  }

  /**
   * The city of each parsed address (null where none, or before any import), for readers of many at once: one
   * pipeline per LOCATE_BATCH addresses.
   */
  async locate({ addresses }: { addresses: readonly Address[] }): Promise<(City | null)[]> {
    const found: (City | null)[] = [];
    for (let i = 0; i < addresses.length; i += LOCATE_BATCH) {
      const batch = await this.commands.citiesByAddress({ addresses: addresses.slice(i, i + LOCATE_BATCH) });
      for (const f of batch) found.push(f ? { id: f.id, ...f.record } : null);
    }
    return found;
  }

  private async lookup(addresses: readonly Address[]): Promise<(City | null)[]> {
    const found = await this.locate({ addresses });
    // A miss before any import is no answer: say what to run rather than a silent null.
    if (found.includes(null) && (await this.commands.generation()) === null) throw NO_DATA;
    return found;
  }
}

function address(argument: string, ip: string): Address {
  const a = parseAddress(ip);
  if (!a) throw badInput(argument, `"${ip.slice(0, 64)}" is not an IPv4 or IPv6 address`);
  return a;
}
