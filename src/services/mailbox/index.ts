/** The mailbox domain: the process's one poller of mailbox heads, with its doorbell connection. */
import { closeRedisClient, createSubscriber } from '../../redis/clients.js';
import { mailboxCommands } from '../../redis/mailbox/commands.js';
import type { Base, Domain } from '../shared/domain.js';
import { MailboxPoller } from './poller.js';

export function createMailbox({ redis, config, log }: Base): Domain<{ poller: MailboxPoller }> {
  const subscriber = createSubscriber(redis, log);
  const poller = new MailboxPoller({ commands: mailboxCommands(redis, subscriber), options: config.poll, log });
  return {
    services: { poller },
    async close() {
      await poller.stop();
      await closeRedisClient(subscriber);
    },
  };
}
