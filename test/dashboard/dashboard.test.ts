/**
 * The operator's dashboard (GET /dashboard) in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core), with every request to anything but the gateway aborted: a non-admin is refused with the API's
 * FORBIDDEN; an admin signs in and each panel shows what this test created, read back through the public API (the
 * requests chart's samples are `counter`'s, the queue row is `queues`', the visits are `dailyVisits`', the search
 * panel's kinds and busiest queries are `searchActivity`'s, the live and cache panels name this process and what its
 * `gatewayFigures` says, the ads' totals are `adTotals`'), a failed task is retried with its button, a log severity
 * filters; a hidden tab asks nothing; a screenshot of each panel lands in
 * test-artifacts/dashboard/ (and of the page in docs/dashboard.png with DASHBOARD_SCREENSHOT=docs).
 *
 * One project is enough: the page talks to GraphQL only, and every field it reads is tested on standalone Redis and
 * on a cluster by its own domain's tests (the retry mutation by test/coordination/retry-failed.test.ts); a browser
 * per project would double the time npm test spends here for nothing that Redis's topology could change.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { geoCommands } from '../../src/redis/geo/commands.js';
import { keyspace } from '../../src/redis/keys.js';
import { CityImport } from '../../src/services/geo/geo-import.js';
import { startWorker } from '../../src/worker/start.js';
import { eventually, startTestApp, uniqueName, type TestApp } from '../support/app.js';
import { fileFailedTask } from '../support/failed-tasks.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = 'test-artifacts/dashboard';
const DAY = '2026-11-20';
const PASSWORD = 'correct horse';
const OPERATION = 'DashboardTestProbe';
const PROBES = 7;

/** A panel refreshes on its own clock or at once on a change; a loaded machine (npm test) may take seconds. */
const poll = <T>(check: () => T | Promise<T>) => expect.poll(check, { timeout: 15_000 });

const noChromium = !existsSync(CHROMIUM);
if (noChromium)
  console.warn(`dashboard tests skipped: no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
const cluster = inject('redis').kind === 'cluster';

let t: TestApp;
let browser: Browser;
let origin: string;
let admin: string;
let queue: string;
/** Requests the page tried to make anywhere but the gateway (aborted). */
const elsewhere: string[] = [];

async function uploadAccessLog(token: string, lines: string[]): Promise<void> {
  const form = new FormData();
  form.append(
    'operations',
    JSON.stringify({ query: 'mutation($f: File!) { uploadAccessLog(file: $f) { id } }', variables: { f: null } }),
  );
  form.append('map', JSON.stringify({ 0: ['variables.f'] }));
  form.append('0', new Blob([`${lines.join('\n')}\n`]), 'access.log');
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'graphql-require-preflight': '1' },
    body: form,
  });
  expect(res.status).toBe(200);
}

/** A new page on the gateway, every request elsewhere aborted (and recorded). */
async function openDashboard(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  await page.goto(`${origin}/dashboard`);
  return page;
}

async function signIn(page: Page, username: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The rows of a panel's table (`selector`), as text cells. */
const rows = (page: Page, selector: string) =>
  page
    .locator(`${selector} tbody tr`)
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));

describe.skipIf(noChromium || cluster)('the dashboard in Chromium', () => {
  beforeAll(async () => {
    // The page as the sources are now (npm run build does the same into dist/dashboard/).
    const bundled = spawnSync(process.execPath, ['scripts/dashboard.mjs'], { encoding: 'utf8' });
    expect(bundled.stderr).toBe('');
    t = await startTestApp({ METRICS_FLUSH_MS: '50', LOG_POLL_MS: '50' });
    origin = new URL(t.url).origin;
    const worker = startWorker({ services: t.app.services, config: t.config, log: createLogger('silent') });
    admin = (await t.signUp('admin', PASSWORD)).token;
    queue = t.app.services.scheduled.queueName;

    // Requests: one operation of this test's own, counted.
    for (let i = 0; i < PROBES; i++) await t.gql(`query ${OPERATION} { __typename }`, {}, admin);
    // Logs: an error in the gateway's log.
    t.app.services.logs.log({ name: 'gateway', severity: 'ERROR', message: 'dashboard test: disk on fire' });
    t.app.services.logs.log({ name: 'gateway', severity: 'WARNING', message: 'dashboard test: disk warm' });
    await t.app.services.logs.flush();
    // Visits: a few cities, and an access log of DAY that a worker counts.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dash-cities-'));
    writeFileSync(
      path.join(dir, 'cities.csv'),
      [
        '10.0.0.0,10.0.0.255,FR,Ile-de-France,,Paris,75001,48.85,2.35',
        '10.0.1.0,10.0.1.255,FR,Auvergne-Rhone-Alpes,,Lyon,69001,45.76,4.83',
        '10.0.3.0,10.0.3.255,JP,Tokyo,,Tokyo,100,35.68,139.69',
      ].join('\n'),
    );
    await new CityImport({ commands: geoCommands(t.redis, keyspace(t.config.keyPrefix)) }).run({
      blocks: [path.join(dir, 'cities.csv')],
    });
    rmSync(dir, { recursive: true, force: true });
    const visit = (ip: string, n: number) => Array.from({ length: n }, (_, i) => `${ip} ${DAY} 10:0${i}:00 view`);
    await uploadAccessLog(admin, [...visit('10.0.0.7', 5), ...visit('10.0.1.9', 3), ...visit('10.0.3.1', 2)]);
    expect(
      await eventually(async () => {
        const r = await t.gql<{ dailyVisits: unknown[] }>(
          `{ dailyVisits(day: "${DAY}", level: CITY) { place } }`,
          {},
          admin,
        );
        return r.data?.dailyVisits.length === 3;
      }, 10_000),
    ).toBe(true);

    await worker.stop(1000);
    // Queues: one failed task once the worker (which would run it) has stopped.
    await fileFailedTask(t, queue, 'dashboard-test', 'it broke on purpose');
    // Ads: two, one of them viewed.
    for (const ad of [
      '{id: "shoes", locations: ["USA"], content: "running shoes", type: CPM, value: 2.5, dailyBudget: 5}',
      '{id: "hats", locations: ["USA"], content: "warm hats", type: CPC, value: 0.25}',
    ])
      expect((await t.gql(`mutation { indexAd(input: ${ad}) { id } }`, {}, admin)).errors).toBeUndefined();
    await t.gql('{ targetAd(locations: ["USA"], content: "shoes") { targetingId } }');
    // Documents to search (the searches run in the test, so that the last minute's rates hold them).
    for (const [id, title] of [
      ['apples', 'Red apples and green apples'],
      ['pears', 'Pears and apples'],
    ])
      expect(
        (
          await t.gql(
            `mutation { indexDocument(id: "${id}", title: "${title}", content: "${title}") { id } }`,
            {},
            admin,
          )
        ).errors,
      ).toBeUndefined();

    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('refuses a non-admin with the API’s FORBIDDEN, saying how to get in', async () => {
    const user = uniqueName('viewer');
    await t.signUp(user, PASSWORD);
    const page = await openDashboard();
    await signIn(page, user);
    const alert = page.locator('form.sign-in [role=alert]');
    await poll(() => alert.getAttribute('data-code')).toBe('FORBIDDEN');
    expect(await alert.textContent()).toContain(`${user} is not an admin`);
    expect(await alert.textContent()).toContain(`npm run admin -- grant ${user}`);
    expect(await page.locator('[data-panel]').count()).toBe(0);
    expect(await page.evaluate(() => sessionStorage.getItem('dashboard.token'))).toBeNull();
    await page.locator('form.sign-in').screenshot({ path: `${ARTIFACTS}/refused.png` });
    await page.context().close();
  });

  it('shows every panel with the data this test made, offline but for the gateway', async () => {
    const page = await openDashboard();
    await signIn(page, 'admin');
    await poll(() => page.locator('[data-viewer]').textContent()).toBe('admin');
    expect(await page.evaluate(() => sessionStorage.getItem('dashboard.token'))).toMatch(/.+/);
    const panel = (id: string) => page.locator(`[data-panel=${id}]`);

    // Requests per second: at 1 s, the samples of this test's operation are counter's.
    await panel('requests').locator('select[name=precision]').selectOption('1');
    const counted = async () =>
      (
        await t.gql<{ counter: { time: string; count: number }[] }>(
          `query($n: String!) { counter(name: $n, precision: 1) { time count } }`,
          { n: OPERATION },
          admin,
        )
      ).data!.counter;
    await poll(async () => (await counted()).reduce((sum, s) => sum + s.count, 0)).toBe(PROBES);
    const expected = (await counted()).map((s) => [OPERATION, s.time, String(s.count)]);
    await poll(async () =>
      (await rows(page, '[data-panel=requests] table.samples'))
        .filter(([name]) => name === OPERATION)
        .map((r) => r.slice(0, 3)),
    ).toEqual(expected);
    expect(await panel('requests').locator('.u-legend').textContent()).toContain(OPERATION);
    expect(await panel('requests').locator('canvas').count()).toBe(1);

    // The slowest operations: operations the gateway served, each with its statistics.
    await poll(async () => (await rows(page, 'table.slowest')).length).toBeGreaterThan(0);
    const { counters } = (await t.gql<{ counters: string[] }>('{ counters }', {}, admin)).data!;
    for (const [name, count, ...times] of await rows(page, 'table.slowest')) {
      expect(counters).toContain(name);
      expect(Number(count!.replace(/\D/g, ''))).toBeGreaterThan(0);
      for (const ms of times) expect(ms).toMatch(/^[\d.,]+$/);
    }

    // Queues: the row is `queues`' own; the failed task is listed, and its button puts it back.
    const queuesNow = async () => {
      const r = await t.gql<{
        queues: { name: string; ready: number; delayed: number; running: number; failed: number }[];
      }>('{ queues { name ready delayed running failed } }', {}, admin);
      return r.data!.queues.map((q) => [q.name, q.ready, q.delayed, q.running, q.failed].map(String));
    };
    await poll(async () => rows(page, 'table.queues')).toEqual(await queuesNow());
    const [row] = (await queuesNow()).filter(([name]) => name === queue);
    expect(row![4]).toBe('1');
    const failedRows = await rows(page, 'table.failed');
    expect(failedRows).toHaveLength(1);
    expect(failedRows[0]).toEqual(expect.arrayContaining([queue, 'dashboard-test', '1', 'it broke on purpose']));
    await panel('queues').screenshot({ path: `${ARTIFACTS}/queues.png` });
    await panel('queues').getByRole('button', { name: 'Retry' }).click();
    await poll(() => panel('queues').locator('[role=status].note').textContent()).toContain('is back in');
    await poll(async () => (await queuesNow()).find(([name]) => name === queue)![4]).toBe('0');
    await poll(async () => rows(page, 'table.queues')).toEqual(await queuesNow());
    expect(await panel('queues').locator('table.failed').count()).toBe(0);

    // Logs: the error and the warning; unticking ERROR leaves the warning alone.
    const recent = () => panel('logs').locator('ol.recent li').allTextContents();
    await poll(recent).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ERROR .* dashboard test: disk on fire$/),
        expect.stringMatching(/^WARNING .* dashboard test: disk warm$/),
      ]),
    );
    expect(await rows(page, 'table.common')).toEqual(
      expect.arrayContaining([['ERROR', '1', 'dashboard test: disk on fire']]),
    );
    await panel('logs').screenshot({ path: `${ARTIFACTS}/logs.png` });
    await panel('logs').getByLabel('error').uncheck();
    await poll(async () => (await recent()).some((line) => line.includes('disk on fire'))).toBe(false);
    expect((await recent()).some((line) => line.includes('disk warm'))).toBe(true);
    await panel('logs').getByLabel('error').check();

    // Visits: DAY by city, as dailyVisits answers, as bars.
    await panel('visits').locator('input[name=day]').fill(DAY);
    await panel('visits').locator('select[name=level]').selectOption('CITY');
    const visits = (
      await t.gql<{ dailyVisits: { place: string; count: number }[] }>(
        `{ dailyVisits(day: "${DAY}", level: CITY) { place count } }`,
        {},
        admin,
      )
    ).data!.dailyVisits.map((v) => [v.place, String(v.count)]);
    expect(visits).toEqual([
      ['FR/Ile-de-France/Paris', '5'],
      ['FR/Auvergne-Rhone-Alpes/Lyon', '3'],
      ['JP/Tokyo/Tokyo', '2'],
    ]);
    await poll(async () => rows(page, 'table.visits')).toEqual(visits);
    expect(await panel('visits').locator('canvas').count()).toBe(1);

    // Ads: `ads` ranked by eCPM.
    const ads = async () => {
      const r = await t.gql<{ ads: { id: string; ecpm: number; views: number; clicks: number }[] }>(
        '{ ads { id ecpm views clicks } }',
        {},
        admin,
      );
      return r.data!.ads.sort((a, b) => b.ecpm - a.ecpm).map((a) => [a.id, String(a.views), String(a.clicks)]);
    };
    expect((await ads()).map(([id]) => id)).toEqual(['shoes', 'hats']);
    await poll(async () =>
      (await rows(page, 'table.ads')).map(([id, , , views, clicks]) => [id, views, clicks]),
    ).toEqual(await ads());
    expect(await panel('ads').locator('canvas').count()).toBe(1);
    // Ads' totals: `adTotals`' views and explored views.
    const totals = (
      await t.gql<{ adTotals: { views: number; explored: number } }>('{ adTotals { views explored } }', {}, admin)
    ).data!.adTotals;
    expect(totals.views).toBe(1);
    await poll(async () => (await rows(page, 'table.ad-totals')).map((r) => [r[2], r[3]])).toEqual([
      [String(totals.views), String(totals.explored)],
    ]);

    // Search: documents indexed, the kinds of the searches just run, the busiest queries, as searchActivity says.
    for (const [query, sort] of [
      ['apples', 'RELEVANCE'],
      ['apples', 'RELEVANCE'],
      ['pea*', 'UPDATED_DESC'],
    ])
      expect(
        (await t.gql(`{ searchDocuments(query: "${query}", sort: ${sort}) { totalCount } }`, {}, admin)).errors,
      ).toBeUndefined();
    const activity = async () =>
      (
        await t.gql<{
          searchActivity: {
            documents: number;
            rates: { kind: string; counts: number[] }[];
            busiestQueries: { query: string; searches: number; found: number }[];
          };
        }>(
          '{ searchActivity { documents rates(seconds: 60) { kind counts } busiestQueries { query searches found } } }',
          {},
          admin,
        )
      ).data!.searchActivity;
    // the searches' second has ended once the API counts them all
    await poll(async () => (await activity()).rates.map((r) => [r.kind, r.counts.reduce((n, c) => n + c, 0)])).toEqual([
      ['UPDATED_DESC', 1],
      ['RELEVANCE', 2],
      ['PREFIX', 1],
    ]);
    const searched = await activity();
    expect(searched.busiestQueries).toEqual([
      { query: 'apples', searches: 2, found: 2 },
      { query: 'pea*', searches: 1, found: 1 },
    ]);
    await poll(() => panel('search').locator('[data-documents]').getAttribute('data-documents')).toBe(
      String(searched.documents),
    );
    await poll(async () => rows(page, 'table.search-kinds')).toEqual([
      ['UPDATED_DESC', '1'],
      ['RELEVANCE', '2'],
      ['PREFIX', '1'],
    ]);
    expect(await rows(page, 'table.busiest')).toEqual(
      searched.busiestQueries.map((q) => [q.query, String(q.searches), String(q.found)]),
    );
    expect(await panel('search').locator('canvas').count()).toBe(1);

    // Live: this process (the test's), its sockets as gatewayFigures says, rates charted from the second reading.
    const figures = async () =>
      (
        await t.gql<{ gatewayFigures: { websockets: number; operations: number; caches: { name: string }[] } }>(
          '{ gatewayFigures { websockets operations caches { name } } }',
          {},
          admin,
        )
      ).data!.gatewayFigures;
    expect(await panel('live').locator('[data-process]').getAttribute('data-process')).toBe(
      `${os.hostname()}:${process.pid}`,
    );
    await poll(() => panel('live').locator('canvas').count()).toBe(1);
    const [now] = await rows(page, 'table.live-now');
    expect(now![1]).toBe(String((await figures()).websockets));
    const [sinceStart] = await rows(page, 'table.live-rates');
    const operations = Number(sinceStart![1]!.replace(/\D/g, ''));
    expect(operations).toBeGreaterThan(0);
    expect(operations).toBeLessThanOrEqual((await figures()).operations);

    // Cache and rate limits: every cache gatewayFigures names; no refusal (the test's limits are off).
    await poll(async () => (await rows(page, 'table.caches')).map(([name]) => name)).toEqual(
      (await figures()).caches.map((c) => c.name),
    );
    expect(await rows(page, 'table.limits')).toEqual([['0', '0', '0']]);

    for (const id of ['requests', 'slowest', 'queues', 'logs', 'visits', 'search', 'ads', 'live', 'caches'])
      await panel(id).screenshot({ path: `${ARTIFACTS}/${id === 'queues' || id === 'logs' ? `${id}-after` : id}.png` });
    await page.screenshot({ path: `${ARTIFACTS}/page.png`, fullPage: true });
    if (process.env.DASHBOARD_SCREENSHOT === 'docs')
      await page.screenshot({ path: 'docs/dashboard.png', fullPage: true });

    expect(elsewhere).toEqual([]);
    await page.context().close();
  });

  it('says what to do when there is nothing to show, and shows a failed panel’s error in that panel', async () => {
    const page = await openDashboard();
    await signIn(page, 'admin');
    const panel = (id: string) => page.locator(`[data-panel=${id}]`);
    await panel('visits').locator('input[name=day]').fill('2001-01-01');
    await poll(() => panel('visits').getAttribute('data-state')).toBe('empty');
    expect(await panel('visits').locator('.empty').textContent()).toContain('upload an access log');
    // A malformed day is the API's BAD_USER_INPUT, shown in the visits panel; the others go on.
    await panel('visits')
      .locator('input[name=day]')
      .evaluate((input: HTMLInputElement) => {
        input.type = 'text';
        input.value = 'someday';
        input.dispatchEvent(new Event('change'));
      });
    await poll(() => panel('visits').getAttribute('data-state')).toBe('error');
    expect(await panel('visits').locator('[role=alert]').textContent()).toContain('BAD_USER_INPUT');
    await panel('visits').screenshot({ path: `${ARTIFACTS}/visits-error.png` });
    expect(await panel('queues').getAttribute('data-state')).toBe('ready');
    expect(elsewhere).toEqual([]);
    await page.context().close();
  });
  it('asks nothing while the tab is hidden, and refreshes at once when it is shown again', async () => {
    const page = await openDashboard();
    await signIn(page, 'admin');
    const panel = page.locator('[data-panel=requests]');
    await poll(() => panel.getAttribute('data-state')).toBe('ready');
    // Every request the page makes from now on, by its body; the tab hidden as a browser hides it.
    const fetchesWhileHidden = await page.evaluate(() => {
      const bodies: string[] = [];
      const fetch = window.fetch.bind(window);
      (window as unknown as { bodies: string[] }).bodies = bodies;
      window.fetch = (input, init) => (
        bodies.push(typeof init?.body === 'string' ? init.body : ''),
        fetch(input, init)
      );
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
      // A change of precision refreshes its panel at once, synchronously up to its fetch: unless the tab is hidden.
      const select = document.querySelector<HTMLSelectElement>('[data-panel=requests] select[name=precision]')!;
      select.value = '300';
      select.dispatchEvent(new Event('change'));
      return bodies.length;
    });
    expect(fetchesWhileHidden).toBe(0);
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await poll(() =>
      page.evaluate(() =>
        (window as unknown as { bodies: string[] }).bodies.some((b) => b.includes('"precision":300')),
      ),
    ).toBe(true);
    await page.context().close();
  });
});
