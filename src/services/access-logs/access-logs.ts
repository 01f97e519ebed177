/**
 * Access-log analytics (the book's chapter 6 file distribution and daily aggregation, without its defects): uploads
 * held in Redis within a bound, announced on a chat of processors logproc-1..N; each processor takes every Nth line
 * against a local copy of the city table and finishes its share in one idempotent script; the last share deletes the
 * file and notifies the uploader. Details: docs/access-logs.md.
 */
import { randomBytes } from 'node:crypto';
import { Readable, pipeline } from 'node:stream';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { Logger } from 'pino';
import { AppError, badInput } from '../../errors.js';
import type { RedisClient } from '../../redis/clients.js';
import * as commands from '../../redis/access-logs/commands.js';
import type { AccessLogKeys } from '../../redis/access-logs/keys.js';
import type { ChatService } from '../chat/chats.js';
import type { CityRecord, GeoService } from '../geo/geo.js';
import { parseAddress, type Address } from '../geo/ip.js';
import type { NotificationService } from '../chat/notifications.js';
import { checkPage } from '../shared/paging.js';
import { SYSTEM_PREFIX, type UserService } from '../users/users.js';
import { pairs } from '../../redis/replies.js';

export type GeoLevel = 'COUNTRY' | 'REGION' | 'CITY';
export const GEO_LEVELS: readonly GeoLevel[] = ['COUNTRY', 'REGION', 'CITY'];

export interface LogUpload {
  id: string;
  filename: string;
  bytes: number;
  status: string;
}

export interface AccessLogOptions {
  processors: number;
  uploadMaxBytes: number;
  heldMaxBytes: number;
}

const CHUNK = 1024 * 1024;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const RECORD_KEPT_MS = 7 * 24 * 3600 * 1000;
export const VISITS_PAGE_MAX = 1000;

function isDay(day: string): boolean {
  return DAY.test(day) && !Number.isNaN(Date.parse(`${day}T00:00:00Z`));
}

/** The places a visit counts for at each level: a country always ("unknown" without data), the others when known. */
export function placesOf(city: CityRecord | null): Record<GeoLevel, string | null> {
  const country = city?.country ?? 'unknown';
  return {
    COUNTRY: country,
    REGION: city?.region ? `${country}/${city.region}` : null,
    CITY: city?.city ? `${country}/${city.region ?? ''}/${city.city}` : null,
  };
}

/** "<ip> <YYYY-MM-DD> <time> <event>": the address and the day, or null when malformed. */
export function parseLine(line: string): { address: Address; day: string } | null {
  const [ip, day, time, event] = line.trim().split(/\s+/);
  if (!ip || !day || !time || !event || !isDay(day)) return null;
  const address = parseAddress(ip);
  return address ? { address, day } : null;
}

export class AccessLogService {
  private readonly k: ReturnType<AccessLogKeys['accessLogs']>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: AccessLogKeys,
    private readonly geo: GeoService,
    private readonly users: UserService,
    private readonly chats: ChatService,
    private readonly notifications: NotificationService,
    private readonly options: AccessLogOptions,
    private readonly log: Logger,
  ) {
    this.k = keys.accessLogs();
  }

  /** Stores an admin's upload and announces it to the processors. */
  async upload(uploader: string, file: File): Promise<LogUpload> {
    if (file.size === 0) throw badInput('file', 'is empty');
    if (file.size > this.options.uploadMaxBytes)
      throw badInput('file', `must be at most ${this.options.uploadMaxBytes} bytes`);
    const chatId = await this.processingChat();
    const id = randomBytes(9).toString('base64url');
    const u = this.k.upload(id);
    const filename = file.name.slice(0, 200) || 'access.log';
    const reserved = await commands.uploadAccessLog(this.redis, this.keys, {
      id,
      bytes: file.size,
      heldMax: this.options.heldMaxBytes,
      filename,
      uploader,
      processors: this.options.processors,
      now: Date.now(),
    });
    if (!reserved) throw new AppError('BUSY', 'uploads waiting to be processed hold too much already; try again later');
    try {
      for await (const chunk of file.stream() as unknown as AsyncIterable<Uint8Array>)
        await this.redis.append(u.data, Buffer.from(chunk));
      await this.redis.hset(u.record, 'status', 'PROCESSING');
      await this.chats.sendMessage(`${SYSTEM_PREFIX}1`, { chatId, text: JSON.stringify({ upload: id }) });
    } catch (err) {
      await commands
        .releaseUpload(this.redis, this.keys, { id, status: 'FAILED', keptMs: RECORD_KEPT_MS })
        .catch(() => undefined);
      throw err;
    }
    return { id, filename, bytes: file.size, status: 'PROCESSING' };
  }

  /** Visits on `day` at `level`, most first. */
  async dailyVisits(day: string, level: GeoLevel, first: number): Promise<{ place: string; count: number }[]> {
    if (!isDay(day)) throw badInput('day', 'must be a date, YYYY-MM-DD');
    checkPage('first', first, VISITS_PAGE_MAX);
    if (first === 0) return [];
    const raw = await this.redis.zrevrange(this.k.visits(day, level), 0, first - 1, 'WITHSCORES');
    return pairs(raw).map(([place, count]) => ({ place, count }));
  }

  /** Processor `share` (1..N): handles every upload announced since its read position. */
  async processPending(share: number, signal?: AbortSignal): Promise<void> {
    const chatId = await this.redis.get(this.k.chat);
    if (!chatId) return;
    const me = `${SYSTEM_PREFIX}${share}`;
    for (;;) {
      const { messages } = await this.chats.read(me, { chatId, after: null, first: 10 });
      if (messages.length === 0) return;
      for (const message of messages) {
        if (signal?.aborted) return;
        const { upload } = JSON.parse(message.text) as { upload: string };
        await this.processShare(upload, share);
        await this.chats.markRead(me, { chatId, upTo: message.id });
      }
    }
  }

  private async processShare(id: string, share: number): Promise<void> {
    const u = this.k.upload(id);
    const [status, processorsText, uploader, filename] = await this.redis.hmget(
      u.record,
      'status',
      'processors',
      'uploader',
      'filename',
    );
    if (status !== 'PROCESSING' || !processorsText || !uploader) return; // done, failed, or gone
    const processors = Number(processorsText);
    const cities = await this.geo.localTable();

    const visits = new Map<string, { day: string; level: string; counts: Map<string, number> }>(); // by "<day> <level>"
    let lines = 0;
    let errors = 0;
    let index = 0;
    for await (const line of this.lines(u.data)) {
      if (index++ % processors !== share - 1) continue;
      if (line.trim() === '') continue;
      lines++;
      const parsed = parseLine(line);
      if (!parsed) {
        errors++;
        continue;
      }
      const places = placesOf(cities.lookup(parsed.address));
      for (const level of GEO_LEVELS) {
        const place = places[level];
        if (!place) continue;
        const key = `${parsed.day} ${level}`;
        const entry = visits.get(key) ?? { day: parsed.day, level, counts: new Map<string, number>() };
        visits.set(key, entry);
        entry.counts.set(place, (entry.counts.get(place) ?? 0) + 1);
      }
    }
    const outcome = await commands.finishShare(this.redis, this.keys, {
      id,
      share,
      lines,
      errors,
      visits: [...visits.values()],
    });
    if (outcome.status !== 'last') return;
    await commands.releaseUpload(this.redis, this.keys, { id, status: 'DONE', keptMs: RECORD_KEPT_MS });
    await this.notifications.notify({
      user: uploader,
      kind: 'logProcessed',
      text: `access log ${filename ?? id}: ${outcome.lines} lines, ${outcome.errors} malformed`,
      data: { upload: id, lines: outcome.lines, errors: outcome.errors },
    });
    this.log.info({ upload: id, lines: outcome.lines, errors: outcome.errors }, 'access log processed');
  }

  /** The upload's lines, streamed from Redis in chunks, gunzipped when gzip. */
  private async *lines(dataKey: string): AsyncGenerator<string> {
    const redis = this.redis;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let offset = 0; ; offset += CHUNK) {
        const chunk = await redis.getrangeBuffer(dataKey, offset, offset + CHUNK - 1);
        if (chunk.length === 0) return;
        yield chunk;
      }
    }
    const head = await redis.getrangeBuffer(dataKey, 0, 1);
    let input: Readable = Readable.from(chunks());
    if (head[0] === 0x1f && head[1] === 0x8b) {
      const gunzip = createGunzip();
      pipeline(input, gunzip, (err) => err && gunzip.destroy(err));
      input = gunzip;
    }
    yield* createInterface({ input, crlfDelay: Infinity });
  }

  /** The chat that announces uploads, with the processors as members; created on first use. */
  private async processingChat(): Promise<string> {
    const existing = await this.redis.get(this.k.chat);
    if (existing) return existing;
    const names = Array.from({ length: this.options.processors }, (_, i) => `${SYSTEM_PREFIX}${i + 1}`);
    await Promise.all(names.map((n) => this.users.createSystemUser({ username: n })));
    const id = await this.chats.createChat(names[0]!, { members: names.slice(1) });
    if ((await this.redis.set(this.k.chat, id, 'NX')) === null) await this.chats.leaveChat(names[0]!, { chatId: id }); // another process won
    return (await this.redis.get(this.k.chat))!;
  }
}
