/**
 * Access-log analytics end to end: a generated gzip log of 100,000 lines uploaded over GraphQL (multipart),
 * processed by 3 processors in a worker, gives exactly the counts computed here line by line; a second upload of
 * the same day doubles them; malformed lines are reported; the file leaves Redis, also when the last share's release
 * failed once (the repeat releases it, one notification); an upload whose uploader died before announcing it is
 * failed past its deadline, giving its bytes back; so is an upload whose gzip file cannot be read, and the uploads
 * behind it are processed; a share finished after the release counts nothing; admins only; size bounds; a file
 * argument that is no file part is refused.
 */
import { gzipSync } from 'node:zlib';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { keysOf } from '../support/keys.js';
import type { AccessLogCommands } from '../../src/redis/access-logs/commands.js';
import { geoCommands } from '../../src/redis/geo/commands.js';
import { keyspace } from '../../src/redis/keys.js';
import { CityImport } from '../../src/services/geo/geo-import.js';
import type { Worker } from '../../src/worker/worker.js';
import { startWorker } from '../../src/worker/start.js';
import { eventually, startTestApp, uniqueName, type TestApp } from '../support/app.js';
import { prefixMemory } from '../support/clients.js';

const UPLOAD = 'mutation($f: File!) { uploadAccessLog(file: $f) { id filename bytes status } }';
const VISITS = 'query($d: String!, $l: GeoLevel) { dailyVisits(day: $d, level: $l, first: 1000) { place count } }';

/** An app of its own with two processors and `env`, its admin's token, and the access-log service's commands. */
async function processorsApp(env: Record<string, string> = {}) {
  const idle = await startTestApp({ LOG_PROCESSORS: '2', ADMIN_USERS: 'boss', ...env });
  const boss = (await idle.signUp('boss')).token;
  const service = idle.app.services.accessLogs;
  const commands = (service as unknown as { commands: AccessLogCommands }).commands;
  return { idle, boss, service, commands };
}

let t: TestApp;
let worker: Worker;
let admin: string;

async function upload(app: TestApp, token: string, name: string, body: Buffer) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { f: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.f'] }));
  form.append('0', new Blob([new Uint8Array(body)]), name);
  return postForm(app, token, form);
}

/** POSTs a multipart request (the GraphQL multipart request spec) as `token`. */
async function postForm(app: TestApp, token: string, form: FormData) {
  const res = await fetch(app.url, {
    method: 'POST',
    headers: { ...(token && { authorization: `Bearer ${token}` }), 'graphql-require-preflight': '1' },
    body: form,
  });
  return {
    status: res.status,
    ...((await res.json()) as {
      data?: { uploadAccessLog: { id: string; bytes: number; status: string } } | null;
      errors?: { message: string; extensions?: { code?: string } }[];
    }),
  };
}

beforeAll(async () => {
  t = await startTestApp({
    LOG_PROCESSORS: '3',
    LOG_POLL_MS: '50',
    UPLOAD_MAX_BYTES: '4000000',
    LOGS_HELD_MAX_BYTES: '8000000',
  });
  worker = startWorker({ services: t.app.services, config: t.config, log: createLogger('silent') });
  admin = (await t.signUp('admin')).token;
  // City data with regions and cities (the ip-location-db city layout), a gap, and IPv6.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rig-logs-'));
  const ranges = path.join(dir, 'cities.csv');
  writeFileSync(
    ranges,
    [
      '10.0.0.0,10.0.0.255,FR,Ile-de-France,,Paris,75001,48.85,2.35',
      '10.0.1.0,10.0.1.255,FR,Auvergne-Rhone-Alpes,,Lyon,69001,45.76,4.83',
      '10.0.3.0,10.0.3.255,JP,Tokyo,,Tokyo,100,35.68,139.69',
      '2001:db8::,2001:db8::ffff,US,California,,San Jose,95101,37.33,-121.89',
    ].join('\n'),
  );
  await new CityImport({ commands: geoCommands(t.redis, keyspace(t.config.keyPrefix)) }).run({ blocks: [ranges] });
  rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await worker?.stop(1000);
});

/** What a visit counts for, by the rules docs/api.md's dailyVisits documents, from the lookups of citiesByIp. */
function places(
  city: { country: string; region: string | null; city: string | null } | null,
): Record<string, string | null> {
  const country = city?.country ?? 'unknown';
  return {
    COUNTRY: country,
    REGION: city?.region ? `${country}/${city.region}` : null,
    CITY: city?.city ? `${country}/${city.region ?? ''}/${city.city}` : null,
  };
}

describe('access-log analytics', () => {
  it('counts 100,000 gzip lines with 3 processors exactly as computed directly; a second upload of the day doubles them', async () => {
    const ips = [
      '10.0.0.7',
      '10.0.0.200',
      '10.0.1.9',
      '10.0.2.5' /* gap */,
      '10.0.3.3',
      '2001:db8::42',
      '192.0.2.1' /* none */,
    ];
    const days = ['2026-11-20', '2026-11-21'];
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++)
      lines.push(`${ips[(i * 7) % ips.length]} ${days[i % 2]} 12:${String(i % 60).padStart(2, '0')}:00 view`);
    const malformed = [
      'garbage',
      '10.0.0.1 2026-13-45 00:00:00 view',
      'not-an-ip 2026-11-20 00:00:00 view',
      '10.0.0.1 2026-11-20',
    ];
    for (const [i, m] of malformed.entries()) lines.splice(1000 * (i + 1), 0, m);
    const file = gzipSync(Buffer.from(`${lines.join('\n')}\n`));

    // Expected, line by line, with citiesByIp for the places.
    const lookup = await t.gql<{
      citiesByIp: ({ country: string; region: string | null; city: string | null } | null)[];
    }>('query($ips: [String!]!) { citiesByIp(ips: $ips) { country region city } }', { ips }, admin);
    const cityOf = new Map(ips.map((ip, i) => [ip, lookup.data!.citiesByIp[i]!]));
    const expected = new Map<string, Map<string, number>>();
    for (const line of lines) {
      const [ip = '', day = ''] = line.split(' ');
      if (!cityOf.has(ip) || !days.includes(day) || line.split(' ').length < 4) continue;
      for (const [level, place] of Object.entries(places(cityOf.get(ip)!))) {
        if (!place) continue;
        const m = expected.get(`${day} ${level}`) ?? new Map<string, number>();
        expected.set(`${day} ${level}`, m.set(place, (m.get(place) ?? 0) + 1));
      }
    }

    const visits = async (day: string, level: string) => {
      const r = await t.gql<{ dailyVisits: { place: string; count: number }[] }>(VISITS, { d: day, l: level }, admin);
      return new Map(r.data!.dailyVisits.map((v) => [v.place, v.count]));
    };
    const processed = async (n: number) =>
      eventually(
        async () => {
          const r = await t.gql<{ notifications: { kind: string; data: { lines: number; errors: number } }[] }>(
            '{ notifications { kind data } }',
            {},
            admin,
          );
          return r.data!.notifications.filter((x) => x.kind === 'logProcessed').length >= n;
        },
        60_000,
        200,
      );

    for (const round of [1, 2]) {
      const r = await upload(t, admin, `access-${round}.log.gz`, file);
      expect(r.errors).toBeUndefined();
      expect(r.data!.uploadAccessLog).toMatchObject({ bytes: file.length, status: 'PROCESSING' });
      expect(await processed(round)).toBe(true);
      for (const day of days) {
        for (const level of ['COUNTRY', 'REGION', 'CITY']) {
          const want = new Map(
            [...(expected.get(`${day} ${level}`) ?? new Map<string, number>())].map(([p, c]) => [p, c * round]),
          );
          expect(await visits(day, level)).toEqual(want);
        }
      }
      // The file left Redis once every processor was done.
      const k = keysOf(t.config.keyPrefix).accessLogs();
      expect(await t.redis.exists(k.upload(r.data!.uploadAccessLog.id).data)).toBe(0);
      expect(Number(await t.redis.get(k.held))).toBe(0);
    }
    const notes = await t.gql<{ notifications: { kind: string; data: { lines: number; errors: number } }[] }>(
      '{ notifications { kind data } }',
      {},
      admin,
    );
    const report = notes.data!.notifications.filter((x) => x.kind === 'logProcessed');
    expect(report.map((x) => x.data)).toEqual([
      expect.objectContaining({ lines: 100_004, errors: 4 }),
      expect.objectContaining({ lines: 100_004, errors: 4 }),
    ]);
  }, 120_000);

  it('counts a share once when a processor repeats it (as after dying before it marked the announcement read)', async () => {
    const idle = await startTestApp({ LOG_PROCESSORS: '2', ADMIN_USERS: 'boss' });
    const boss = (await idle.signUp('boss')).token;
    const log = Array.from({ length: 10 }, (_, i) => `10.0.0.${i} 2026-11-22 10:00:00 view`).join('\n');
    const r = await upload(idle, boss, 'repeat.log', Buffer.from(log));
    const id = r.data!.uploadAccessLog.id;
    const processShare = (share: number) =>
      (
        idle.app.services.accessLogs as unknown as { processShare(a: { id: string; share: number }): Promise<void> }
      ).processShare({ id, share });
    await processShare(1);
    await processShare(1); // the repeat
    const k = keysOf(idle.config.keyPrefix).accessLogs();
    expect(await idle.redis.exists(k.upload(id).data)).toBe(1); // share 2 is still to come
    await processShare(2);
    expect(await idle.redis.exists(k.upload(id).data)).toBe(0);
    expect(await idle.redis.hmget(k.upload(id).record, 'lines', 'status')).toEqual(['10', 'DONE']);
    expect(await idle.redis.zscore(k.visits('2026-11-22', 'COUNTRY'), 'unknown')).toBe('10'); // no city data in this app
  });

  it('releases an upload whose last share was counted but not released, when that share is repeated; notifies once', async () => {
    // The bound holds one of these uploads at a time: an upload left held would make the next one BUSY.
    const { idle, boss, service, commands } = await processorsApp({
      UPLOAD_MAX_BYTES: '1024',
      LOGS_HELD_MAX_BYTES: '1024',
    });
    const processShare = (id: string, share: number) =>
      (service as unknown as { processShare(a: { id: string; share: number }): Promise<void> }).processShare({
        id,
        share,
      });
    const release = commands.releaseUpload.bind(commands);
    const k = keysOf(idle.config.keyPrefix).accessLogs();
    const log = Buffer.from(Array.from({ length: 20 }, (_, i) => `10.0.0.${i} 2026-11-23 10:00:00 view`).join('\n'));
    expect(log.length).toBeGreaterThan(512);
    const reports = async () =>
      (
        await idle.gql<{ notifications: { kind: string; data: { upload: string; lines: number } }[] }>(
          '{ notifications { kind data } }',
          {},
          boss,
        )
      ).data!.notifications.filter((n) => n.kind === 'logProcessed');

    const first = (await upload(idle, boss, 'first.log', log)).data!.uploadAccessLog.id;
    await service.processPending({ share: 1 });
    // The last share is counted, then its release fails (as when the process dies between the two scripts).
    commands.releaseUpload = () => Promise.reject(new Error('connection lost'));
    await expect(service.processPending({ share: 2 })).rejects.toThrow('connection lost');
    commands.releaseUpload = release;
    expect(await idle.redis.hget(k.upload(first).record, 'status')).toBe('PROCESSING');
    // Its announcement is still unread: the next poll repeats the share, which now releases the upload.
    await service.processPending({ share: 2 });
    expect(await idle.redis.hmget(k.upload(first).record, 'lines', 'status')).toEqual(['20', 'DONE']);
    expect(await idle.redis.exists(k.upload(first).data, k.upload(first).shares)).toBe(0);
    expect(Number(await idle.redis.get(k.held))).toBe(0);
    expect((await reports()).map((n) => n.data)).toEqual([expect.objectContaining({ upload: first, lines: 20 })]);

    // The bytes were given back: the next upload fits. Its last share answers 'last' twice (a repeat running while
    // the first answer's release is on its way): one release, one notification.
    const second = await upload(idle, boss, 'second.log', log);
    expect(second.errors).toBeUndefined();
    const id = second.data!.uploadAccessLog.id;
    await processShare(id, 1);
    let raced = false;
    commands.releaseUpload = async (a) => {
      commands.releaseUpload = release;
      raced = true;
      await processShare(id, 2); // the repeat: finishes, releases and notifies first
      return release(a);
    };
    await processShare(id, 2);
    expect(raced).toBe(true);
    expect(await idle.redis.hmget(k.upload(id).record, 'lines', 'status')).toEqual(['20', 'DONE']);
    expect(Number(await idle.redis.get(k.held))).toBe(0);
    expect((await reports()).map((n) => n.data.upload).sort()).toEqual([first, id].sort());
  });

  it('counts nothing for a share finished after the upload was released (a processor that read it PROCESSING)', async () => {
    const { idle, boss, commands } = await processorsApp();
    const k = keysOf(idle.config.keyPrefix).accessLogs();
    const day = '2026-11-25';
    const log = Array.from({ length: 10 }, (_, i) => `10.0.0.${i} ${day} 10:00:00 view`).join('\n');
    const id = (await upload(idle, boss, 'released.log', Buffer.from(log))).data!.uploadAccessLog.id;
    const share = { id, lines: 5, errors: 0, visits: [{ day, level: 'COUNTRY', counts: new Map([['unknown', 5]]) }] };
    expect(await commands.finishShare({ ...share, share: 1 })).toEqual({ status: 'counted' });
    // Released (failed, or done by the last share) while processor 1 repeats its share, having read it PROCESSING.
    expect(await commands.releaseUpload({ id, status: 'FAILED', keptMs: 60_000 })).toBe(true);
    expect(await commands.finishShare({ ...share, share: 1 })).toEqual({ status: 'notProcessing' });
    expect(await commands.finishShare({ ...share, share: 2 })).toEqual({ status: 'notProcessing' });
    expect(await idle.redis.exists(k.upload(id).shares)).toBe(0);
    expect(await idle.redis.hmget(k.upload(id).record, 'lines', 'status')).toEqual(['5', 'FAILED']);
    expect(await idle.redis.zscore(k.visits(day, 'COUNTRY'), 'unknown')).toBe('5');
  });

  it('fails an upload whose uploader died before announcing it once its deadline passed: its bytes come back', async () => {
    // The bound holds one of these uploads at a time: the abandoned one makes the next BUSY until it is failed.
    const { idle, boss, service, commands } = await processorsApp({
      UPLOAD_MAX_BYTES: '1024',
      LOGS_HELD_MAX_BYTES: '1024',
      LOG_UPLOAD_DEADLINE_MS: '200',
    });
    const k = keysOf(idle.config.keyPrefix).accessLogs();
    const log = Buffer.from(Array.from({ length: 20 }, (_, i) => `10.0.0.${i} 2026-11-24 10:00:00 view`).join('\n'));
    expect(log.length).toBeGreaterThan(512);

    // An upload whose file stops coming after its first chunk, as when its process dies mid-upload (the stream is
    // resumed at the end: a process that was only slow).
    let id = '';
    const reserve = commands.uploadAccessLog.bind(commands);
    commands.uploadAccessLog = (a) => ((id = a.id), reserve(a));
    let resume!: () => void;
    const resumed = new Promise<void>((r) => (resume = r));
    let started = false;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!started) {
          started = true;
          return controller.enqueue(log.subarray(0, 100));
        }
        await resumed;
        controller.enqueue(log.subarray(100));
        controller.close();
      },
    });
    const file = { name: 'dying.log', size: log.length, stream: () => stream } as unknown as File;
    const dying = service.upload('boss', { file });
    expect(await eventually(async () => id !== '' && (await idle.redis.strlen(k.upload(id).data)) === 100)).toBe(true);
    commands.uploadAccessLog = reserve;
    expect(Number(await idle.redis.get(k.held))).toBe(log.length);
    expect((await upload(idle, boss, 'next.log', log)).errors?.[0]?.extensions?.code).toBe('BUSY');

    // Processor 1's poll fails it once its deadline has passed, as a failed upload is failed.
    const failed = async () => {
      await service.processPending({ share: 1 });
      return (await idle.redis.hget(k.upload(id).record, 'status')) === 'FAILED';
    };
    expect(await eventually(failed)).toBe(true);
    expect(Number(await idle.redis.get(k.held))).toBe(0);
    expect(await idle.redis.exists(k.upload(id).data)).toBe(0);
    expect(await idle.redis.pttl(k.upload(id).record)).toBeGreaterThan(0);

    // The bytes were given back: the next upload fits, and once announced it is no longer watched.
    const next = await upload(idle, boss, 'next.log', log);
    expect(next.errors).toBeUndefined();
    expect(await idle.redis.zcard(k.unannounced)).toBe(0);
    // The first uploader, only slow, writes nothing more and fails.
    resume();
    await expect(dying).rejects.toThrow('failed as abandoned');
    expect(await idle.redis.exists(k.upload(id).data)).toBe(0);
    expect(await idle.redis.hget(k.upload(id).record, 'status')).toBe('FAILED');
    expect(Number(await idle.redis.get(k.held))).toBe(log.length); // the next upload's
  });

  it('fails an upload whose gzip file cannot be read, giving its bytes back; the uploads behind it are processed', async () => {
    const { idle, boss, service, commands } = await processorsApp();
    const k = keysOf(idle.config.keyPrefix).accessLogs();
    const lines = (day: string, n: number) =>
      Buffer.from(Array.from({ length: n }, (_, i) => `10.0.0.${i % 250} ${day} 10:00:00 view`).join('\n'));
    // A gzip header followed by garbage ("invalid block type"), and a real gzip log cut in half ("unexpected end of
    // file"; its first half decodes to lines of its own day, counted by nobody).
    const garbled = Buffer.concat([gzipSync(Buffer.from('')).subarray(0, 10), Buffer.from('not deflate data at all')]);
    const whole = gzipSync(lines('2026-11-26', 20_000));
    const truncated = whole.subarray(0, whole.length >> 1);
    const bad: string[] = [];
    for (const [name, file] of [
      ['garbled.log.gz', garbled],
      ['truncated.log.gz', truncated],
    ] as const)
      bad.push((await upload(idle, boss, name, file)).data!.uploadAccessLog.id);
    const good = (await upload(idle, boss, 'good.log.gz', gzipSync(lines('2026-11-27', 10)))).data!.uploadAccessLog.id;
    expect(Number(await idle.redis.get(k.held))).toBe(
      garbled.length + truncated.length + (await idle.redis.strlen(k.upload(good).data)),
    );

    // An error of Redis's while reading the file (through the gunzip stream, after its header was read) is not the
    // file's: the upload waits for the next poll.
    const read = commands.uploadBytes.bind(commands);
    commands.uploadBytes = (a) => (a.length === 2 ? read(a) : Promise.reject(new Error('connection lost')));
    await expect(service.processPending({ share: 1 })).rejects.toThrow('connection lost');
    commands.uploadBytes = read;
    expect(await idle.redis.hget(k.upload(bad[0]!).record, 'status')).toBe('PROCESSING');
    expect(await idle.redis.exists(k.upload(bad[0]!).data)).toBe(1);

    // Each processor's poll fails the unreadable uploads, marks their announcements read and goes on to the good one.
    await service.processPending({ share: 1 });
    await service.processPending({ share: 2 });
    for (const id of bad) {
      expect(await idle.redis.hget(k.upload(id).record, 'status')).toBe('FAILED');
      expect(await idle.redis.exists(k.upload(id).data, k.upload(id).shares)).toBe(0);
    }
    expect(await idle.redis.hmget(k.upload(good).record, 'lines', 'status')).toEqual(['10', 'DONE']);
    expect(Number(await idle.redis.get(k.held))).toBe(0);
    expect(await idle.redis.exists(k.visits('2026-11-26', 'COUNTRY'))).toBe(0);
    expect(await idle.redis.zscore(k.visits('2026-11-27', 'COUNTRY'), 'unknown')).toBe('10');
    // Failed uploads notify nobody; the good one does.
    const notes = await idle.gql<{ notifications: { kind: string; data: { upload: string } }[] }>(
      '{ notifications { kind data } }',
      {},
      boss,
    );
    expect(notes.data!.notifications.map((n) => [n.kind, n.data.upload])).toEqual([['logProcessed', good]]);
  });

  it('is for admins; refuses an oversized file before storing it, and BUSY past the bytes held', async () => {
    const user = await t.signUp();
    expect(
      (await upload(t, user.token, 'x.log', Buffer.from('10.0.0.1 2026-11-20 00:00:00 view\n'))).errors?.[0]?.extensions
        ?.code,
    ).toBe('FORBIDDEN');
    // Only an admin's multipart body may pass MAX_REQUEST_BYTES (1 MiB): anybody else's is refused before it is read.
    const past = Buffer.alloc(t.config.limits.requestBytes + 1, 'a');
    for (const token of [user.token, '']) {
      const refused = await upload(t, token, 'x.log', past);
      expect([refused.status, refused.errors?.[0]?.extensions?.code]).toEqual([413, 'BAD_USER_INPUT']);
    }
    const oversized = await upload(t, admin, 'big.log', Buffer.alloc(4_000_001, 'a'));
    expect(oversized.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const k = keysOf(t.config.keyPrefix).accessLogs();
    expect(Number((await t.redis.get(k.held)) ?? 0)).toBe(0);
    expect((await t.gql(VISITS, { d: '2026-99-01' }, admin)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    // No processors here: uploads wait, and past the bound the next one is BUSY.
    const idle = await startTestApp({ UPLOAD_MAX_BYTES: '2000', LOGS_HELD_MAX_BYTES: '3000', ADMIN_USERS: 'boss' });
    const boss = (await idle.signUp('boss')).token;
    const line = Buffer.alloc(1600, 'x'); // two would hold 3200 bytes
    expect((await upload(idle, boss, uniqueName('a'), line)).data?.uploadAccessLog.status).toBe('PROCESSING');
    expect((await upload(idle, boss, uniqueName('b'), line)).errors?.[0]?.extensions?.code).toBe('BUSY');
  });

  it('refuses a file argument that is no file part (a string, an object, a text part) with BAD_USER_INPUT, writing nothing', async () => {
    // An app of its own: no upload has made its processing chat yet, and its keys are those written here.
    const fresh = await startTestApp({ ADMIN_USERS: 'boss' });
    const boss = (await fresh.signUp('boss')).token;
    const before = (await prefixMemory(fresh.redis, fresh.config.keyPrefix)).keys.sort();
    const asVariable = (f: unknown) => {
      const form = new FormData();
      form.append('operations', JSON.stringify({ query: UPLOAD, variables: { f } }));
      return form;
    };
    const textPart = asVariable(null);
    textPart.append('map', JSON.stringify({ 0: ['variables.f'] }));
    textPart.append('0', '10.0.0.1 2026-11-20 00:00:00 view');
    for (const form of [asVariable('x'), asVariable({ name: 'x' }), textPart]) {
      const [error] = (await postForm(fresh, boss, form)).errors ?? [];
      expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error?.message).toMatch(/^Variable "\$f" got invalid value .*File is a file part of a multipart request/);
    }
    // Nor as a literal.
    const literal = await fresh.gql('mutation { uploadAccessLog(file: "x") { id } }', {}, boss);
    expect(literal.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(literal.errors?.[0]?.message).toMatch(/^Expected value of type "File!", found "x"/);
    expect((await prefixMemory(fresh.redis, fresh.config.keyPrefix)).keys.sort()).toEqual(before);
  });
});
