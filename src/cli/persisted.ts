/**
 * `npm run persisted -- list | remove SHA256`: the trusted documents admins registered (PERSISTED_ONLY=on), from the
 * operator's machine (the root of trust, like `npm run admin`). Connects like `npm run admin`: REDIS_URL,
 * REDIS_CLUSTER_NODES, or the embedded Redis of a gateway running on the same DATA_DIR; with the gateways'
 * PERSISTED_DOCUMENTS, it knows the manifest's hashes too (listed nowhere here, never removed here).
 */
import { Kind, parse } from 'graphql';
import { ConfigError, loadConfig } from '../config.js';
import { runProcess } from '../run-process.js';
import { createLogger } from '../logger.js';
import { closeRedisClient, createRedisClient } from '../redis/clients.js';
import { endpointOf } from '../redis/embedded.js';
import { keyspace } from '../redis/keys.js';
import { persistedQueryCommands } from '../redis/persisted-queries/commands.js';
import { replicaWait } from '../redis/replicas.js';
import { userCommands } from '../redis/users/commands.js';
import { loadManifest } from '../services/persisted-queries/manifest.js';
import { TrustedDocuments } from '../services/persisted-queries/trusted.js';
import { AdminService } from '../services/users/admins.js';
import { print } from './print.js';

const USAGE = 'usage: npm run persisted -- list | remove SHA256';
/** How much of an anonymous operation's document `list` shows. */
const EXCERPT_CHARS = 80;

/**
 * How `list` names a document: its operations (`query TrustedMe`), or, when one is anonymous (or it does not
 * parse), its first 80 characters on one line.
 */
function describe(document: string): string {
  try {
    const operations = parse(document).definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    if (operations.every((o) => o.name)) return operations.map((o) => `${o.operation} ${o.name!.value}`).join(', ');
  } catch {
    // Shown as written.
  }
  return document.replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);
}

async function main(): Promise<void> {
  const [command, hash, ...rest] = process.argv.slice(2);
  if (!(command === 'list' ? hash === undefined : command === 'remove' && hash && rest.length === 0))
    throw new ConfigError(USAGE);
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const options = config.persistedQueries;
  const manifest = options.manifest === undefined ? new Map<string, string>() : loadManifest(options.manifest);
  const redis = createRedisClient(await endpointOf(config.redis), log, 'persisted-cli');
  const space = keyspace(config.keyPrefix);
  const replicated = replicaWait(redis, config.replicaWait, space, log);
  try {
    const admins = new AdminService({ commands: userCommands(redis, space, replicated), shortcut: new Set() });
    const commands = persistedQueryCommands(redis, space, replicated);
    const trusted = new TrustedDocuments({ commands, admins, manifest, options, log });
    if (command === 'remove') {
      await print(process.stdout, `removed ${await trusted.remove({ sha256: hash! })}\n`);
      return;
    }
    if (options.manifest !== undefined)
      await print(process.stderr, `not listed: the manifest's documents (${manifest.size}), in ${options.manifest}\n`);
    let count = 0;
    for await (const { sha256, document } of trusted.list()) {
      await print(process.stdout, `${sha256} ${describe(document)}\n`);
      count += 1;
    }
    await print(process.stdout, `${count} registered document${count === 1 ? '' : 's'}\n`);
  } finally {
    await replicated.close();
    await closeRedisClient(redis);
  }
}

runProcess('persisted', main);
