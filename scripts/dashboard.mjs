// The dashboard's client (dashboard/, TypeScript for the browser) bundled with its chart library and styles into
// dist/dashboard/ (index.html, main.js, main.css), which src/gateway/dashboard.ts serves at /dashboard: nothing is
// fetched from elsewhere. `npm run build` calls it; `node scripts/dashboard.mjs` rebuilds the dashboard alone.
import { copyFileSync, mkdirSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export async function bundleDashboard(outdir = 'dist/dashboard') {
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: ['dashboard/main.ts'],
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    target: 'es2022',
    outdir,
    logLevel: 'warning',
  });
  copyFileSync('dashboard/index.html', `${outdir}/index.html`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleDashboard();
