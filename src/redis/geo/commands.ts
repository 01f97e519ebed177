/** The geo domain's scripts, with named arguments. */
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../clients.js';
import { script } from '../scripts.js';
import type { GeoKeys } from './keys.js';

const cityByIpScript = script<[string, string, string, string | null] | null>('cityByIp');
const swapCitiesScript = script<1>('swapCities');

/** The reply of cityByIp: [city id, latitude, longitude, city JSON or null], or null when no range holds the address. */
export type CityByIpReply = [string, string, string, string | null] | null;

/** Queues the lookup of one address (its family's ranges, the address as fixed-width hex) in `pipeline`. */
export function cityByIp(pipeline: ChainableCommander, k: GeoKeys, a: { family: 4 | 6; hex: string }): void {
  const g = k.geo();
  cityByIpScript.queue(pipeline, [a.family === 4 ? g.ranges4 : g.ranges6, g.cities], [a.hex]);
}

/** Puts the data an import loaded in place of the live data, at once. */
export async function swapCities(redis: RedisClient, k: GeoKeys): Promise<void> {
  const [live, loading] = [k.geo(), k.geo('loading')];
  await swapCitiesScript(
    redis,
    [live.ranges4, live.ranges6, live.cities, loading.ranges4, loading.ranges6, loading.cities, live.generation],
    [],
  );
}
