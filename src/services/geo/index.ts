/** The geo domain: IP-to-city lookups (the data comes from `npm run import:cities`). */
import { geoCommands } from '../../redis/geo/commands.js';
import type { Base, Domain } from '../shared/domain.js';
import { GeoService } from './geo.js';

export function createGeo({ redis, space }: Base): Domain<{ geo: GeoService }> {
  return { services: { geo: new GeoService({ commands: geoCommands(redis, space) }) } };
}
