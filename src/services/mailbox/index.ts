/** The mailbox domain: the process's one poller of mailbox heads, with its doorbell connection. */
import { closeRedisClient, createSubscriber } from '../../redis/clients.js';
import { mailboxCommands, type MailboxCommands } from '../../redis/mailbox/commands.js';
import type { Base, Domain, DomainMetric } from '../shared/domain.js';
import { MailboxPoller } from './poller.js';

export function createMailbox({ redis, config, log }: Base): Domain<{ poller: MailboxPoller }> {
  const subscriber = createSubscriber(redis, log);
  const counted = countedCommands(mailboxCommands(redis, subscriber));
  const poller = new MailboxPoller({ commands: counted.commands, options: config.poll, log });
  const f = counted.figures;
  const metrics: DomainMetric[] = [
    {
      name: 'mailbox_reads_total',
      help: 'Reads of watched heads by the poller (for rings without a value, audit steps, resyncs): one round trip per Redis node each',
      type: 'counter',
      collect: () => [{ value: f.reads }],
    },
    {
      name: 'mailbox_heads_read_total',
      help: 'Heads those reads read',
      type: 'counter',
      collect: () => [{ value: f.heads }],
    },
    {
      name: 'mailbox_rings_total',
      help: 'Doorbell rings heard (sharded pub/sub messages)',
      type: 'counter',
      collect: () => [{ value: f.rings }],
    },
    {
      name: 'mailbox_lost_rings_total',
      help: 'Moves the audit found that no ring announced, not even late: rings lost on their way',
      type: 'counter',
      collect: () => [{ value: poller.lost }],
    },
    {
      name: 'mailbox_watched_heads',
      help: 'Head keys the poller watches (one per chat or notification mailbox with a live subscriber here)',
      type: 'gauge',
      collect: () => [{ value: poller.size.keys }],
    },
    {
      name: 'mailbox_doorbell_channels',
      help: 'Doorbell channels subscribed to',
      type: 'gauge',
      collect: () => [{ value: poller.size.channels }],
    },
    {
      name: 'mailbox_doorbells_up',
      help: '1 while the doorbell connection is up (rings reach this process), else 0',
      type: 'gauge',
      collect: () => [{ value: poller.doorbells().up ? 1 : 0 }],
    },
  ];
  return {
    services: { poller },
    metrics,
    async close() {
      await poller.stop();
      await closeRedisClient(subscriber);
    },
  };
}

/** The poller's commands, counting its reads and the rings it hears (for `metrics`). */
function countedCommands(commands: MailboxCommands) {
  const figures = { reads: 0, heads: 0, rings: 0 };
  const counted: MailboxCommands = {
    ...commands,
    readHeads(a) {
      figures.reads++;
      figures.heads += a.heads.length;
      return commands.readHeads(a);
    },
    doorbells: {
      ...commands.doorbells,
      onMessage: (handler) =>
        commands.doorbells.onMessage((channel, message) => {
          figures.rings++;
          handler(channel, message);
        }),
    },
  };
  return { commands: counted, figures };
}
