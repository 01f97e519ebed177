import * as resolvers from '../resolvers/geo.js';
import type { City } from '../services/geo/geo.js';
import { builder } from './builder.js';
import { IPS_MAX } from '../services/geo/geo.js';

const CityType = builder.objectRef<City>('City').implement({
  description: 'Where an IP address is, from the imported city data (`npm run import:cities`).',
  fields: (t) => ({
    id: t.exposeID('id'),
    city: t.exposeString('city', { nullable: true }),
    region: t.exposeString('region', { nullable: true }),
    country: t.exposeString('country', {
      description: 'ISO country code (or continent code where the data has no country).',
    }),
    latitude: t.exposeFloat('latitude', { nullable: true }),
    longitude: t.exposeFloat('longitude', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  cityByIp: t.withAuth({ signedIn: true }).field({
    type: CityType,
    nullable: true,
    description:
      'The city of an IPv4 or IPv6 address; null when it falls in no imported range (NOT_FOUND before any `npm run import:cities`).',
    args: { ip: t.arg.string({ required: true }) },
    resolve: resolvers.cityByIp,
  }),
  citiesByIp: t.withAuth({ signedIn: true }).field({
    type: [CityType],
    nullable: { list: false, items: true },
    description: `The city of each address, in the same order (null where none); at most ${IPS_MAX}, looked up in one round trip.`,
    args: { ips: t.arg.stringList({ required: true }) },
    resolve: resolvers.citiesByIp,
  }),
}));
