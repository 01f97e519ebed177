/** Keys of access-log analytics, all on one slot so that finishing a share of a file is one script. */
import type { Keyspace } from '../keys.js';

export type AccessLogKeys = ReturnType<typeof accessLogKeys>;

export function accessLogKeys({ key }: Keyspace) {
  const a = (...parts: string[]) => key('logs', 'access', ...parts);
  return {
    accessLogs: () => ({
      /** string: bytes of uploads held in Redis */
      held: a('held'),
      /** string: the id of the chat that announces uploads to the processors */
      chat: a('chat'),
      /** sorted set: upload id → the time (ms) by which its uploader announces it; past it, the uploader is dead */
      unannounced: a('unannounced'),
      upload: (id: string) => ({
        /** hash: filename, bytes, uploader, processors, createdAt, status, lines, errors */
        record: a('up', id),
        /** string: the file as uploaded (plain or gzip) */
        data: a('up', id, 'data'),
        /** set: the processors (1..N) done with their share */
        shares: a('up', id, 'shares'),
      }),
      /** sorted set: place → visits on `day` at `level` (country, region, city) */
      visits: (day: string, level: string) => a('visits', day, level),
    }),
  };
}
