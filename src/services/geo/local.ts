/**
 * A process-local copy of the city index: sorted ranges per family, searched in memory, for readers that look up
 * many addresses at once (an access-log processor's share). It is read again when an import moved the generation.
 */
import type { CityRecord, Family, GeoCommands } from '../../redis/geo/commands.js';
import type { Address } from './ip.js';

/** Ranges read per round trip: a full city dataset has millions of ranges, too many for one reply. */
const LOAD_PAGE = 50_000;

export interface CityTable {
  /** The city of an address; null when no range holds it. */
  lookup(address: Address): CityRecord | null;
}

interface Ranges {
  starts: string[];
  ends: string[];
  ids: string[];
}

class Table implements CityTable {
  constructor(
    private readonly ranges: Record<Family, Ranges>,
    private readonly cities: Map<string, CityRecord>,
  ) {}

  lookup(a: Address): CityRecord | null {
    const t = this.ranges[a.family];
    let lo = 0;
    let hi = t.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (t.starts[mid]! <= a.hex) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0 || t.ends[found]! < a.hex) return null;
    return this.cities.get(t.ids[found]!) ?? null;
  }
}

export class LocalCities {
  private table: { generation: string | null; table: Table } | undefined;

  constructor(private readonly commands: GeoCommands) {}

  /** The table of the live data's generation (one round trip when it has not moved). */
  async current(): Promise<CityTable> {
    const generation = await this.commands.generation();
    if (this.table?.generation !== generation) this.table = { generation, table: await this.load() };
    return this.table.table;
  }

  private async load(): Promise<Table> {
    const ranges = { 4: await this.family(4), 6: await this.family(6) };
    return new Table(ranges, await this.commands.cities());
  }

  private async family(family: Family): Promise<Ranges> {
    const t: Ranges = { starts: [], ends: [], ids: [] };
    for (let from = 0; ; from += LOAD_PAGE) {
      const page = await this.commands.ranges({ family, from, count: LOAD_PAGE });
      for (const r of page) {
        t.starts.push(r.start);
        t.ends.push(r.end);
        t.ids.push(r.id);
      }
      if (page.length < LOAD_PAGE) return t;
    }
  }
}
