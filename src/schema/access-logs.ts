import * as resolvers from '../resolvers/access-logs.js';
import { GEO_LEVELS, type LogUpload } from '../services/access-logs/access-logs.js';
import { builder } from './builder.js';
import { VISITS_PAGE_MAX } from '../services/access-logs/access-logs.js';

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

const GeoLevelType = builder.enumType('GeoLevel', { values: GEO_LEVELS });

const VisitCountType = builder.objectRef<{ place: string; count: number }>('VisitCount').implement({
  description:
    'Visits to a place: a country code, "country/region", or "country/region/city" ("unknown" without city data).',
  fields: (t) => ({ place: t.exposeString('place'), count: t.exposeInt('count') }),
});

builder.queryFields((t) => ({
  dailyVisits: t.field({
    type: [VisitCountType],
    description: `Visits on \`day\` (YYYY-MM-DD) from the uploaded access logs, most first; \`first\` at most ${VISITS_PAGE_MAX}.`,
    args: {
      day: t.arg.string({ required: true }),
      level: t.arg({ type: GeoLevelType, defaultValue: 'COUNTRY' }),
      first: t.arg.int({ defaultValue: 50 }),
    },
    resolve: resolvers.dailyVisits,
  }),
}));

builder.mutationFields((t) => ({
  uploadAccessLog: t.field({
    type: LogUploadType,
    description:
      'Admin: an access log, plain or gzip, lines "<ip> <YYYY-MM-DD> <time> <event>"; at most UPLOAD_MAX_BYTES (BUSY while waiting uploads hold LOGS_HELD_MAX_BYTES).',
    args: { file: t.arg({ type: 'File', required: true }) },
    resolve: resolvers.uploadAccessLog,
  }),
}));
