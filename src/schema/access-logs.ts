import * as resolvers from '../resolvers/access-logs.js';
import {
  GEO_LEVEL_DEFAULT,
  GEO_LEVELS,
  VISITS_PAGE,
  type GeoLevel,
  type LogUpload,
} from '../services/access-logs/access-logs.js';
import { builder } from './builder.js';
import { enumValues, firstArg } from './args.js';

const LogUploadType = builder.objectRef<LogUpload>('LogUpload').implement({
  description:
    'An access log handed to the processors; the uploader is notified (kind logProcessed) when they are done.',
  fields: (t) => ({
    id: t.exposeID('id'),
    filename: t.exposeString('filename'),
    bytes: t.exposeInt('bytes'),
    status: t.exposeString('status'),
  }),
});

const GEO_LEVEL_DESCRIPTIONS = {
  COUNTRY: 'By country code ("unknown" without city data).',
  REGION: 'By "country/region", where the region is known.',
  CITY: 'By "country/region/city", where the city is known.',
} satisfies Record<GeoLevel, string>;

const GeoLevelType = builder.enumType('GeoLevel', {
  values: enumValues(GEO_LEVELS, GEO_LEVEL_DESCRIPTIONS),
});

const VisitCountType = builder.objectRef<{ place: string; count: number }>('VisitCount').implement({
  description:
    'Visits to a place: a country code, "country/region", or "country/region/city" ("unknown" without city data).',
  fields: (t) => ({ place: t.exposeString('place'), count: t.exposeInt('count') }),
});

builder.queryFields((t) => ({
  dailyVisits: t.withAuth({ signedIn: true }).field({
    type: [VisitCountType],
    description: 'Visits on `day` (YYYY-MM-DD) from the uploaded access logs, most first.',
    args: {
      day: t.arg.string({ required: true }),
      level: t.arg({ type: GeoLevelType, required: true, defaultValue: GEO_LEVEL_DEFAULT }),
      first: firstArg(t.arg, VISITS_PAGE),
    },
    resolve: resolvers.dailyVisits,
  }),
}));

builder.mutationFields((t) => ({
  uploadAccessLog: t.withAuth({ admin: true }).field({
    type: LogUploadType,
    description:
      'Admin: an access log, plain or gzip, lines "<ip> <YYYY-MM-DD> <time> <event>"; at most UPLOAD_MAX_BYTES (BUSY while waiting uploads hold LOGS_HELD_MAX_BYTES).',
    args: { file: t.arg({ type: 'File', required: true }) },
    resolve: resolvers.uploadAccessLog,
  }),
}));
