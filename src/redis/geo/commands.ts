/**
 * The geo domain's door to Redis: lookups in the IP-to-city index (one pipeline per batch), and an import's writes
 * under the `loading` keys, swapped in by one script.
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import { script } from '../scripts.js';
import { geoKeys } from './keys.js';

const cityByIpScript = script<[string, string, string, string | null] | null>('cityByIp');
const swapCitiesScript = script<1>('swapCities');

export type Family = 4 | 6;

/** What an import stores per city id (as JSON in the cities hash). */
export interface CityRecord {
  city: string | null;
  region: string | null;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

/** A stored range of addresses (fixed-width hex, `end` included) and the id of its city. */
export interface StoredRange {
  start: string;
  end: string;
  id: string;
}

/** A lookup's answer: the city's id and record, with the range's coordinates where the range had them. */
export interface FoundCity {
  id: string;
  record: CityRecord;
}

export type GeoCommands = ReturnType<typeof geoCommands>;

export function geoCommands(redis: RedisClient, space: Keyspace) {
  const k = geoKeys(space);
  const live = k.geo();
  const loading = k.geo('loading');
  const rangesOf = (keys: typeof live, family: Family) => (family === 4 ? keys.ranges4 : keys.ranges6);
  const coordinate = (s: string): number | null => (s === '' ? null : Number(s));
  return {
    /** The city of each address (null where no range holds it), in one pipeline. */
    async citiesByAddress(a: { addresses: readonly { family: Family; hex: string }[] }): Promise<(FoundCity | null)[]> {
      const pipeline = redis.pipeline();
      for (const { family, hex } of a.addresses)
        cityByIpScript.queue(pipeline, [rangesOf(live, family), live.cities], [hex]);
      const results = (await pipeline.exec()) ?? [];
      return results.map(([err, found]) => {
        if (err) throw err;
        if (!found) return null;
        const [id, lat, lon, json] = found as [string, string, string, string | null];
        if (json === null) return null;
        const record = JSON.parse(json) as CityRecord;
        return {
          id,
          record: {
            ...record,
            latitude: coordinate(lat) ?? record.latitude,
            longitude: coordinate(lon) ?? record.longitude,
          },
        };
      });
    },

    /** The live data's generation: it moves with every import. */
    generation(): Promise<string | null> {
      return redis.get(live.generation);
    },

    /** Deletes what an import cut short left under the loading keys. */
    async clearLoading(): Promise<void> {
      await redis.del(loading.ranges4, loading.ranges6, loading.cities);
    },

    async loadCities(a: { cities: readonly [string, CityRecord][] }): Promise<void> {
      await redis.hset(loading.cities, ...a.cities.flatMap(([id, record]) => [id, JSON.stringify(record)]));
    },

    /** Loads ranges of a family, with the coordinates of the range where the data has them. */
    async loadRanges(a: {
      family: Family;
      ranges: readonly (StoredRange & { latitude: number | null; longitude: number | null })[];
    }): Promise<void> {
      await redis.zadd(
        rangesOf(loading, a.family),
        ...a.ranges.flatMap((r) => [0, `${r.start}|${r.end}|${r.latitude ?? ''}|${r.longitude ?? ''}|${r.id}`]),
      );
    },

    /** The bytes the live data takes in Redis (MEMORY USAGE of its keys, every element counted). */
    async bytes(): Promise<number> {
      const sizes = await Promise.all(
        [live.ranges4, live.ranges6, live.cities].map((key) => redis.memory('USAGE', key, 'SAMPLES', 0)),
      );
      return sizes.reduce<number>((sum, n) => sum + (n ?? 0), 0);
    },

    /** Puts the loaded data in place of the live data, at once, and moves the generation. */
    async swapCities(): Promise<void> {
      await swapCitiesScript(
        redis,
        [live.ranges4, live.ranges6, live.cities, loading.ranges4, loading.ranges6, loading.cities, live.generation],
        [],
      );
    },
  };
}
