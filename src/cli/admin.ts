/**
 * `npm run admin -- grant NAME | revoke NAME | list`: stored admin grants, from the operator's machine (the root
 * of trust: no admin is needed to make the first one). Connects like `npm run worker`: REDIS_URL,
 * REDIS_CLUSTER_NODES, or the embedded Redis of a gateway running on the same DATA_DIR.
 */
import { ConfigError, loadConfig } from '../config.js';
import { runProcess } from '../run-process.js';
import { createLogger } from '../logger.js';
import { closeRedisClient, createRedisClient } from '../redis/clients.js';
import { endpointOf } from '../redis/embedded.js';
import { keyspace } from '../redis/keys.js';
import { replicaWait } from '../redis/replicas.js';
import { userCommands } from '../redis/users/commands.js';
import { AdminService } from '../services/users/admins.js';
import { print } from './print.js';

const USAGE = 'usage: npm run admin -- grant NAME | revoke NAME | list';

async function main(): Promise<void> {
  const [command, name, ...rest] = process.argv.slice(2);
  const needsName = command === 'grant' || command === 'revoke';
  if (!(needsName || command === 'list') || (needsName ? !name || rest.length > 0 : name !== undefined))
    throw new ConfigError(USAGE);
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const redis = createRedisClient(await endpointOf(config.redis), log, 'admin-cli');
  const space = keyspace(config.keyPrefix);
  const replicated = replicaWait(redis, config.replicaWait, space, log);
  try {
    const admins = new AdminService({ commands: userCommands(redis, space, replicated), shortcut: new Set() });
    const username = name!;
    if (command === 'grant') await print(process.stdout, `granted admin to ${await admins.grantAdmin({ username })}\n`);
    else if (command === 'revoke')
      await print(process.stdout, `revoked admin of ${await admins.revokeAdmin({ username })}\n`);
    else await print(process.stdout, (await admins.list()).map((u) => `${u}\n`).join(''));
  } finally {
    await replicated.close();
    await closeRedisClient(redis);
  }
}

runProcess('admin', main);
