/** The access-logs domain's scripts, with named arguments. */
import type { RedisClient } from '../clients.js';
import { script } from '../scripts.js';
import { STATUS } from '../status.js';
import type { AccessLogKeys } from './keys.js';

const uploadAccessLogScript = script<0 | 1>('uploadAccessLog');
const releaseUploadScript = script<0 | 1>('releaseUpload');
const finishShareScript = script<number[]>('finishShare');

/** Records upload `id` and reserves its bytes under `heldMax`; false when it would pass the bound (nothing written). */
export async function uploadAccessLog(
  redis: RedisClient,
  k: AccessLogKeys,
  a: {
    id: string;
    bytes: number;
    heldMax: number;
    filename: string;
    uploader: string;
    processors: number;
    now: number;
  },
): Promise<boolean> {
  const logs = k.accessLogs();
  const reply = await uploadAccessLogScript(
    redis,
    [logs.held, logs.upload(a.id).record],
    [a.bytes, a.heldMax, a.filename, a.uploader, a.processors, a.now],
  );
  return reply === 1;
}

/** Upload `id` leaves Redis with `status`, giving its bytes back (once); its record is kept `keptMs`. */
export async function releaseUpload(
  redis: RedisClient,
  k: AccessLogKeys,
  a: { id: string; status: 'DONE' | 'FAILED'; keptMs: number },
): Promise<void> {
  const logs = k.accessLogs();
  const u = logs.upload(a.id);
  await releaseUploadScript(redis, [logs.held, u.record, u.data, u.shares], [a.status, a.keptMs]);
}

export type ShareOutcome =
  { status: 'counted' | 'before' | 'missing' } | { status: 'last'; lines: number; errors: number };

/** Counts share `share` of upload `id` once: its line and error counts, and its visits by day and level. */
export async function finishShare(
  redis: RedisClient,
  k: AccessLogKeys,
  a: {
    id: string;
    share: number;
    lines: number;
    errors: number;
    visits: readonly { day: string; level: string; counts: ReadonlyMap<string, number> }[];
  },
): Promise<ShareOutcome> {
  const logs = k.accessLogs();
  const u = logs.upload(a.id);
  const keys = [u.record, u.shares, ...a.visits.map((v) => logs.visits(v.day, v.level))];
  const args = [a.share, a.lines, a.errors, JSON.stringify(a.visits.map((v) => Object.fromEntries(v.counts)))];
  const [status, lines, errors] = await finishShareScript(redis, keys, args);
  if (status === 2) return { status: 'last', lines: lines!, errors: errors! };
  return { status: status === 1 ? 'counted' : status === STATUS.NOT_FOUND ? 'missing' : 'before' };
}
