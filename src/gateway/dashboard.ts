/**
 * GET /dashboard: the operator's dashboard, static files that `npm run build` bundles into dist/dashboard/
 * (scripts/dashboard.mjs; its sources are dashboard/). The page is a client of the public GraphQL API like any
 * other: admins sign in on it, and the API decides what they see. Served beside yoga (gateway/http.ts), with a
 * content security policy that lets the page reach nothing but this origin.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const DASHBOARD_PATH = '/dashboard';
/** dist/dashboard/, from src/gateway/ (tests, npm run dev) and from dist/gateway/ (npm start) alike. */
const ASSETS = new URL('../../dist/dashboard/', import.meta.url);
/** The files served, by the path under /dashboard ('' and '/' are the page). */
const FILES = new Map<string, readonly [string, string]>([
  ['', ['index.html', 'text/html; charset=utf-8']],
  ['/', ['index.html', 'text/html; charset=utf-8']],
  ['/main.js', ['main.js', 'text/javascript; charset=utf-8']],
  ['/main.css', ['main.css', 'text/css; charset=utf-8']],
  ['/main.js.map', ['main.js.map', 'application/json']],
  ['/main.css.map', ['main.css.map', 'application/json']],
]);
const HEADERS = {
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  // uPlot sets inline styles on the elements it draws; everything else comes from this origin.
  'content-security-policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
};

/** Serves `req` when it asks for the dashboard (true), else leaves it to the caller (false). */
export function serveDashboard(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? '';
  // Its prefix first: every request asks.
  if (!url.startsWith(DASHBOARD_PATH)) return false;
  if (url !== DASHBOARD_PATH && !url.startsWith(`${DASHBOARD_PATH}/`) && !url.startsWith(`${DASHBOARD_PATH}?`))
    return false;
  const file = FILES.get(url.slice(DASHBOARD_PATH.length).split('?')[0]!);
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found.\n');
    return true;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('GET only.\n');
    return true;
  }
  const [name, type] = file;
  readFile(new URL(name, ASSETS)).then(
    (body) => res.writeHead(200, { ...HEADERS, 'content-type': type }).end(req.method === 'HEAD' ? undefined : body),
    () =>
      res
        .writeHead(503, { 'content-type': 'text/plain' })
        .end('The dashboard is not built: run npm run build (it bundles dashboard/ into dist/dashboard/).\n'),
  );
  return true;
}
