/** Keys of the IP-to-city index. */
import type { Keyspace } from '../keys.js';

export type GeoKeys = ReturnType<typeof geoKeys>;

export function geoKeys({ key }: Keyspace) {
  return {
    /** the IP-to-city index, all on one slot; `loading` ones are filled by an import and swapped in at its end */
    geo: (stage: 'live' | 'loading' = 'live') => {
      const g = (name: string) =>
        stage === 'loading' ? key('geo', 'cities', name, 'loading') : key('geo', 'cities', name);
      return {
        /** sorted set, every score 0: "<first hex>|<last hex>|<latitude>|<longitude>|<city id>", by ZRANGEBYLEX */
        ranges4: g('ranges4'),
        ranges6: g('ranges6'),
        /** hash: city id → JSON {city, region, country, latitude, longitude} */
        cities: g('cities'),
        /** string counter bumped by every import; absent until the first (a lookup then says to import) */
        generation: key('geo', 'cities', 'generation'),
      };
    },
  };
}
