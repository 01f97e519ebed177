/**
 * The access-logs domain's door to Redis: uploads held within a bound, the processors' shares, the daily visits
 * they count, and the id of the chat that announces uploads. The services of src/services/access-logs/ reach Redis
 * only through the object accessLogCommands() returns.
 */
import type { RedisClient } from '../clients.js';
import type { Keyspace } from '../keys.js';
import { pairs } from '../replies.js';
import { script } from '../scripts.js';
import { accessLogKeys } from './keys.js';

const uploadAccessLogScript = script<0 | 1>('uploadAccessLog');
const appendUploadScript = script<0 | 1>('appendUpload');
const markProcessingScript = script<0 | 1>('markProcessing');
const releaseUploadScript = script<0 | 1>('releaseUpload');
const failAbandonedUploadScript = script<0 | 1>('failAbandonedUpload');
const finishShareScript = script<number[]>('finishShare');

export type AccessLogCommands = ReturnType<typeof accessLogCommands>;

export type ShareOutcome =
  { status: 'counted' | 'before' | 'notProcessing' } | { status: 'last'; lines: number; errors: number };

export function accessLogCommands(redis: RedisClient, space: Keyspace) {
  const logs = accessLogKeys(space).accessLogs();
  return {
    /** The id of the chat that announces uploads; null before the first upload. */
    processingChat(): Promise<string | null> {
      return redis.get(logs.chat);
    },

    /** Records `chatId` as the chat that announces uploads, unless one is recorded already; whether it was. */
    async setProcessingChat(a: { chatId: string }): Promise<boolean> {
      return (await redis.set(logs.chat, a.chatId, 'NX')) !== null;
    },

    /**
     * Records upload `id` and reserves its bytes under `heldMax`, to be announced by `deadline` (ms; past it, the
     * uploader is taken for dead); false when it would pass the bound (nothing written).
     */
    async uploadAccessLog(a: {
      id: string;
      bytes: number;
      heldMax: number;
      filename: string;
      uploader: string;
      processors: number;
      now: number;
      deadline: number;
    }): Promise<boolean> {
      const reply = await uploadAccessLogScript(
        redis,
        [logs.held, logs.upload(a.id).record, logs.unannounced],
        [a.bytes, a.heldMax, a.filename, a.uploader, a.processors, a.now, a.id, a.deadline],
      );
      return reply === 1;
    },

    /** Appends `chunk` to the file of upload `id`; false when it is no longer being stored (nothing written). */
    async appendUpload(a: { id: string; chunk: Uint8Array }): Promise<boolean> {
      const u = logs.upload(a.id);
      return (await appendUploadScript(redis, [u.record, u.data], [Buffer.from(a.chunk)])) === 1;
    },

    /** Hands upload `id`, stored whole, to the processors; false when it is no longer being stored. */
    async markProcessing(a: { id: string }): Promise<boolean> {
      return (await markProcessingScript(redis, [logs.upload(a.id).record], [])) === 1;
    },

    /**
     * Upload `id` was announced to the processors: its uploader's death no longer fails it. False when it had been
     * failed as abandoned already (its uploader was slower than its deadline).
     */
    async announced(a: { id: string }): Promise<boolean> {
      return (await redis.zrem(logs.unannounced, a.id)) === 1;
    },

    /** Uploads whose uploader had to announce them by `now` and did not (died), at most `limit`. */
    abandonedUploads(a: { now: number; limit: number }): Promise<string[]> {
      return redis.zrangebyscore(logs.unannounced, '-inf', a.now, 'LIMIT', 0, a.limit);
    },

    /**
     * Upload `id`, unannounced past its deadline by `now`, leaves Redis as a failed upload does (releaseUpload with
     * FAILED); whether this call failed it (false when it was announced or released meanwhile, or is not late).
     */
    async failAbandonedUpload(a: { id: string; now: number; keptMs: number }): Promise<boolean> {
      const u = logs.upload(a.id);
      const keys = [logs.held, u.record, u.data, u.shares, logs.unannounced];
      return (await failAbandonedUploadScript(redis, keys, [a.id, a.now, a.keptMs])) === 1;
    },

    /** Up to `length` bytes of upload `id`'s file from `offset`; empty past its end. */
    uploadBytes(a: { id: string; offset: number; length: number }): Promise<Buffer> {
      return redis.getrangeBuffer(logs.upload(a.id).data, a.offset, a.offset + a.length - 1);
    },

    /** What the processors need of upload `id`; null when it is gone. */
    async upload(a: { id: string }): Promise<{
      status: string;
      processors: number;
      uploader: string;
      filename: string | null;
    } | null> {
      const [status, processors, uploader, filename] = await redis.hmget(
        logs.upload(a.id).record,
        'status',
        'processors',
        'uploader',
        'filename',
      );
      if (!status || !processors || !uploader) return null;
      return { status, processors: Number(processors), uploader, filename: filename ?? null };
    },

    /**
     * Upload `id` leaves Redis with `status`, giving its bytes back (once); its record is kept `keptMs`. Whether this
     * call released it (false when it had been already).
     */
    async releaseUpload(a: { id: string; status: 'DONE' | 'FAILED'; keptMs: number }): Promise<boolean> {
      const u = logs.upload(a.id);
      const keys = [logs.held, u.record, u.data, u.shares, logs.unannounced];
      return (await releaseUploadScript(redis, keys, [a.id, a.status, a.keptMs])) === 1;
    },

    /**
     * Counts share `share` of upload `id` once: its line and error counts, and its visits by day and level. 'last'
     * (with the totals) whenever every share is done, also for a share counted before: the caller releases the upload.
     * 'notProcessing' (nothing counted) when the upload is not PROCESSING: gone, or released meanwhile.
     */
    async finishShare(a: {
      id: string;
      share: number;
      lines: number;
      errors: number;
      visits: readonly { day: string; level: string; counts: ReadonlyMap<string, number> }[];
    }): Promise<ShareOutcome> {
      const u = logs.upload(a.id);
      const keys = [u.record, u.shares, ...a.visits.map((v) => logs.visits(v.day, v.level))];
      const args = [a.share, a.lines, a.errors, JSON.stringify(a.visits.map((v) => Object.fromEntries(v.counts)))];
      const [status, lines, errors] = await finishShareScript(redis, keys, args);
      if (status === 2) return { status: 'last', lines: lines!, errors: errors! };
      return { status: status === 1 ? 'counted' : status === 3 ? 'notProcessing' : 'before' };
    },

    /** The places visited most on `day` at `level`, most first, at most `limit`. */
    async visits(a: { day: string; level: string; limit: number }): Promise<{ place: string; count: number }[]> {
      const raw = await redis.zrevrange(logs.visits(a.day, a.level), 0, a.limit - 1, 'WITHSCORES');
      return pairs(raw).map(([place, count]) => ({ place, count }));
    },
  };
}
