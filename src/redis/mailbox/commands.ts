/**
 * The mailbox engine's door to Redis: it reads the head keys that move with their mailboxes, and listens on the
 * doorbell connection (sharded pub/sub: SSUBSCRIBE, `smessage` events) that announces their moves. It knows no
 * domain: the keys and channels are named by the domains whose mailboxes they are.
 */
import { Cluster, Redis } from 'ioredis';
import { isReady, type RedisClient } from '../clients.js';

/**
 * A head key that moves with its mailbox, and the doorbell channel that announces its moves (named by its domain).
 * A head is a string key, or with `field` that field of a hash (a document's head lives in the document's hash, so
 * it goes when the document does); a key is watched as one head only.
 */
export interface Head {
  key: string;
  channel: string;
  field?: string;
}

export type MailboxCommands = ReturnType<typeof mailboxCommands>;

/** `subscriber` is the doorbell connection (clients.ts createSubscriber), to the same Redis as `redis`. */
export function mailboxCommands(redis: RedisClient, subscriber: RedisClient) {
  return {
    /** The value of each head (null: none); issued together, so one round trip per node. */
    readHeads(a: { heads: readonly Omit<Head, 'channel'>[] }): Promise<(string | null)[]> {
      return Promise.all(
        a.heads.map(({ key, field }) => (field === undefined ? redis.get(key) : redis.hget(key, field))),
      );
    },

    /** The doorbell connection. */
    doorbells: {
      /** Its name in CLIENT LIST (a cluster: part of each shard connection's name). */
      name:
        (subscriber instanceof Cluster ? subscriber.options.redisOptions : subscriber.options)?.connectionName ?? '',
      subscribe: async (a: { channel: string }): Promise<void> => void (await subscriber.ssubscribe(a.channel)),
      unsubscribe: async (a: { channel: string }): Promise<void> => void (await subscriber.sunsubscribe(a.channel)),
      /** Calls `handler` with every message of every channel subscribed to. */
      onMessage: (handler: (channel: string, message: string) => void): void => void subscriber.on('smessage', handler),
      /** Calls `handler` whenever the connection closes (a cluster: a shard's connection; rings sent until it is back are lost). */
      onClose: (handler: () => void): void =>
        void subscriber.on(subscriber instanceof Cluster ? '-node' : 'close', handler),
      /** Calls `handler` whenever the connection is back and its subscriptions are being renewed (a cluster: a shard's). */
      onReconnect: (handler: () => void): void =>
        void subscriber.on(subscriber instanceof Cluster ? 'subscribersReady' : 'ready', handler),
      /** Whether rings reach this process now. */
      up: (): boolean => isReady(subscriber),
      /** Stops reading the connection (its rings wait in the socket) until the returned resume: how tests make a process hear late. */
      hold: (): (() => void) => {
        if (!(subscriber instanceof Redis)) throw new Error('a cluster has a doorbell connection per node');
        subscriber.stream.pause();
        return () => subscriber.stream.resume();
      },
    },
  };
}
