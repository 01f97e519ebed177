/**
 * Access-log analytics (the book's chapter 6 file distribution and daily aggregation, without its defects): uploads
 * held in Redis within a bound, announced on a chat of processors logproc-1..N; each processor takes every Nth line,
 * looks its addresses up in the city table in batches, and finishes its share in one idempotent script; the last
 * share deletes the file and notifies the uploader. Details: docs/access-logs.md.
 */
import { randomBytes } from 'node:crypto';
import { Readable, pipeline } from 'node:stream';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { Logger } from 'pino';
import { AppError, badInput } from '../../errors.js';
import type { AccessLogCommands } from '../../redis/access-logs/commands.js';
import type { ChatService } from '../chat/chats.js';
import type { CityRecord, GeoService } from '../geo/geo.js';
import { CITY_DATA_LOCK } from '../geo/geo-import.js';
import type { RwLockService } from '../coordination/rwlocks.js';
import { parseAddress, type Address } from '../geo/ip.js';
import type { NotificationService } from '../chat/notifications.js';
import { checkPage, type Page } from '../shared/paging.js';
import { SYSTEM_PREFIX, type UserService } from '../users/users.js';

/** The levels visits are counted at; the schema describes each (schema/access-logs.ts). */
export const GEO_LEVELS = ['COUNTRY', 'REGION', 'CITY'] as const;
export type GeoLevel = (typeof GEO_LEVELS)[number];
/** The level of dailyVisits when the caller does not say. */
export const GEO_LEVEL_DEFAULT: GeoLevel = 'COUNTRY';
/** Lines of a share whose addresses are looked up together (geo.locate() pipelines them). */
const LOOKUP_LINES = 1000;
/** Places of a day's visits, per read. */
export const VISITS_PAGE: Page = { default: 50, max: 1000 };

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
  uploadDeadlineMs: number;
}

export interface AccessLogDeps {
  commands: AccessLogCommands;
  geo: GeoService;
  /** An upload is located under a read lock on the city data, which an import takes to write. */
  rwlocks: RwLockService;
  users: UserService;
  chats: ChatService;
  notifications: NotificationService;
  options: AccessLogOptions;
  log: Logger;
}

const CHUNK = 1024 * 1024;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const RECORD_KEPT_MS = 7 * 24 * 3600 * 1000;
/** A processor locates an upload's share under this read lease (kept alive; not waited for while an import writes). */
const LOCATING = { name: CITY_DATA_LOCK, mode: 'read', leaseMs: 30_000 } as const;
/** Announcements a processor reads at a time. */
const ANNOUNCEMENTS_BATCH = 10;
/** Abandoned uploads processor 1 looks for at a time. */
const ABANDONED_BATCH = 100;

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

/**
 * Whether `err` is zlib's (Z_DATA_ERROR for a garbled gzip file, Z_BUF_ERROR for one cut short): the file cannot be
 * read, and never will be. Redis's errors have no such code; they are retried by the next poll.
 */
function isUnreadable(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

export class AccessLogService {
  private readonly commands: AccessLogCommands;
  private readonly geo: GeoService;
  private readonly rwlocks: RwLockService;
  private readonly users: UserService;
  private readonly chats: ChatService;
  private readonly notifications: NotificationService;
  private readonly options: AccessLogOptions;
  private readonly log: Logger;

  constructor(deps: AccessLogDeps) {
    ({
      commands: this.commands,
      geo: this.geo,
      rwlocks: this.rwlocks,
      users: this.users,
      chats: this.chats,
      notifications: this.notifications,
      options: this.options,
      log: this.log,
    } = deps);
  }

  /** Stores an admin's upload and announces it to the processors. */
  async upload(uploader: string, { file }: { file: File }): Promise<LogUpload> {
    if (file.size === 0) throw badInput('file', 'is empty');
    if (file.size > this.options.uploadMaxBytes)
      throw badInput('file', `must be at most ${this.options.uploadMaxBytes} bytes`);
    const chatId = await this.processingChat();
    const id = randomBytes(9).toString('base64url');
    const filename = file.name.slice(0, 200) || 'access.log';
    const now = Date.now();
    const reserved = await this.commands.uploadAccessLog({
      id,
      bytes: file.size,
      heldMax: this.options.heldMaxBytes,
      filename,
      uploader,
      processors: this.options.processors,
      now,
      deadline: now + this.options.uploadDeadlineMs,
    });
    if (!reserved) throw new AppError('BUSY', 'uploads waiting to be processed hold too much already; try again later');
    // Past the deadline processor 1 fails the upload as abandoned (this process taken for dead): then nothing more is
    // written, and the upload fails here too.
    const late = () => new Error(`upload ${id} was not announced within its deadline: failed as abandoned`);
    try {
      for await (const chunk of file.stream() as unknown as AsyncIterable<Uint8Array>)
        if (!(await this.commands.appendUpload({ id, chunk }))) throw late();
      if (!(await this.commands.markProcessing({ id }))) throw late();
      await this.chats.sendMessage(`${SYSTEM_PREFIX}1`, { chatId, text: JSON.stringify({ upload: id }) });
      if (!(await this.commands.announced({ id }))) throw late();
    } catch (err) {
      await this.commands.releaseUpload({ id, status: 'FAILED', keptMs: RECORD_KEPT_MS }).catch(() => undefined);
      throw err;
    }
    return { id, filename, bytes: file.size, status: 'PROCESSING' };
  }

  /** Visits on `day` at `level`, most first. */
  async dailyVisits({
    day,
    level,
    first,
  }: {
    day: string;
    level: GeoLevel;
    first: number;
  }): Promise<{ place: string; count: number }[]> {
    if (!isDay(day)) throw badInput('day', 'must be a date, YYYY-MM-DD');
    if (!GEO_LEVELS.includes(level)) throw badInput('level', `must be one of ${GEO_LEVELS.join(', ')}`);
    checkPage('first', first, VISITS_PAGE.max);
    if (first === 0) return [];
    return this.commands.visits({ day, level, limit: first });
  }

  /**
   * Processor `share` (1..N): handles every upload announced since its read position, until `signal` aborts.
   * Processor 1 first fails the uploads whose uploaders died before announcing them.
   */
  async processPending({ share, signal }: { share: number; signal?: AbortSignal }): Promise<void> {
    if (share === 1) await this.failAbandoned();
    const chatId = await this.commands.processingChat();
    if (!chatId) return;
    const me = `${SYSTEM_PREFIX}${share}`;
    for (;;) {
      const { messages } = await this.chats.read(me, { chatId, after: null, first: ANNOUNCEMENTS_BATCH });
      if (messages.length === 0) return;
      for (const message of messages) {
        if (signal?.aborted) return;
        const { upload } = JSON.parse(message.text) as { upload: string };
        try {
          await this.rwlocks.withLock(LOCATING, () => this.processShare({ id: upload, share }));
        } catch (err) {
          if (AppError.is(err) && err.code === 'BUSY') return; // a city import is writing: a later poll goes on
          throw err;
        }
        await this.chats.markRead(me, { chatId, upTo: message.id });
      }
    }
  }

  /** Uploads not announced by their deadline leave Redis as failed uploads do, giving their bytes back. */
  private async failAbandoned(): Promise<void> {
    const now = Date.now();
    for (;;) {
      const ids = await this.commands.abandonedUploads({ now, limit: ABANDONED_BATCH });
      for (const id of ids)
        if (await this.commands.failAbandonedUpload({ id, now, keptMs: RECORD_KEPT_MS }))
          this.log.warn({ upload: id }, 'access log upload failed: its uploader did not announce it in time');
      if (ids.length < ABANDONED_BATCH) return;
    }
  }

  private async processShare({ id, share }: { id: string; share: number }): Promise<void> {
    const upload = await this.commands.upload({ id });
    if (upload?.status !== 'PROCESSING') return; // done, failed, or gone
    const { processors, uploader, filename } = upload;
    const visits = new Map<string, { day: string; level: GeoLevel; counts: Map<string, number> }>(); // by "<day> <level>"
    let lines = 0;
    let errors = 0;
    let index = 0;
    // Lines wait in a batch; its distinct addresses are looked up together.
    let batch: { day: string; address: string }[] = [];
    const addresses = new Map<string, Address>();
    const count = async () => {
      const cities = await this.geo.locate({ addresses: [...addresses.values()] });
      const cityOf = new Map([...addresses.keys()].map((key, i) => [key, cities[i] ?? null]));
      for (const { day, address } of batch) {
        const places = placesOf(cityOf.get(address) ?? null);
        for (const level of GEO_LEVELS) {
          const place = places[level];
          if (!place) continue;
          const key = `${day} ${level}`;
          const entry = visits.get(key) ?? { day, level, counts: new Map<string, number>() };
          visits.set(key, entry);
          entry.counts.set(place, (entry.counts.get(place) ?? 0) + 1);
        }
      }
      batch = [];
      addresses.clear();
    };
    try {
      for await (const line of this.lines({ id })) {
        if (index++ % processors !== share - 1) continue;
        if (line.trim() === '') continue;
        lines++;
        const parsed = parseLine(line);
        if (!parsed) {
          errors++;
          continue;
        }
        const key = `${parsed.address.family}:${parsed.address.hex}`;
        addresses.set(key, parsed.address);
        batch.push({ day: parsed.day, address: key });
        if (batch.length >= LOOKUP_LINES) await count();
      }
    } catch (err) {
      if (!isUnreadable(err)) throw err;
      // Every processor reads the whole file and fails at the same byte, so no share of it is ever counted: the upload
      // fails (its bytes back, its data gone) and the caller marks its announcement read. As an abandoned upload, it
      // notifies nobody.
      if (await this.commands.releaseUpload({ id, status: 'FAILED', keptMs: RECORD_KEPT_MS }))
        this.log.warn({ upload: id, err }, 'access log upload failed: its file cannot be read');
      return;
    }
    await count();
    const outcome = await this.commands.finishShare({ id, share, lines, errors, visits: [...visits.values()] });
    // 'last' again for a repeated share when the release after the first 'last' never happened (the processor died
    // or the release failed); whoever releases notifies, so a 'last' answered twice does not notify twice.
    if (outcome.status !== 'last') return;
    if (!(await this.commands.releaseUpload({ id, status: 'DONE', keptMs: RECORD_KEPT_MS }))) return;
    await this.notifications.notify({
      user: uploader,
      kind: 'logProcessed',
      text: `access log ${filename ?? id}: ${outcome.lines} lines, ${outcome.errors} malformed`,
      data: { upload: id, lines: outcome.lines, errors: outcome.errors },
    });
    this.log.info({ upload: id, lines: outcome.lines, errors: outcome.errors }, 'access log processed');
  }

  /** The upload's lines, streamed from Redis in chunks, gunzipped when gzip. */
  private async *lines({ id }: { id: string }): AsyncGenerator<string> {
    const commands = this.commands;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let offset = 0; ; offset += CHUNK) {
        const chunk = await commands.uploadBytes({ id, offset, length: CHUNK });
        if (chunk.length === 0) return;
        yield chunk;
      }
    }
    const head = await commands.uploadBytes({ id, offset: 0, length: 2 });
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
    const existing = await this.commands.processingChat();
    if (existing) return existing;
    const names = Array.from({ length: this.options.processors }, (_, i) => `${SYSTEM_PREFIX}${i + 1}`);
    await Promise.all(names.map((username) => this.users.createSystemUser({ username })));
    const chatId = await this.chats.createChat(names[0]!, { members: names.slice(1) });
    // Another process won: this chat goes.
    if (!(await this.commands.setProcessingChat({ chatId }))) await this.chats.leaveChat(names[0]!, { chatId });
    return (await this.commands.processingChat())!;
  }
}
