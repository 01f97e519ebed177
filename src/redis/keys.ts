/**
 * Every Redis key the product uses, built in one place. Keys that one script, transaction or pipeline
 * touches together share a hash tag (the part in braces), so the product runs unchanged on Redis Cluster.
 * The deployment's KEY_PREFIX goes in front, outside the tag.
 */
export type Keys = ReturnType<typeof createKeys>;

export function createKeys(prefix: string) {
  const k = (s: string) => prefix + s;
  return {
    /** hash: username, passwordHash, createdAt */
    userProfile: (username: string) => k(`user:{${username}}:profile`),
    /** sorted set, every score 0: lowercase usernames, read with ZRANGEBYLEX */
    userDirectory: () => k('users:{dir}:names'),
    /** set: the usernames holding a stored admin grant */
    admins: () => k('users:{admins}'),
    /** string: the username a session token (by its SHA-256) belongs to, with an idle expiry */
    session: (tokenHash: string) => k(`session:{${tokenHash}}`),
    /** Revoked sessions, for the processes that cache sessions (src/services/users/sessions.ts). */
    sessionRevocations: () => ({
      /** string: a counter that moves on every revocation */
      head: k('sessions:{revoked}:head'),
      /** sharded pub/sub channel: the doorbell, rung with "<head> <new value> <token hash> <ack channel>" */
      bell: k('sessions:{revoked}:bell'),
      /** sharded pub/sub channel of one process: every process that heard a revocation confirms it here with "<value>" */
      ack: (processId: string) => k(`sessions:{revoked}:ack:${processId}`),
    }),
    /**
     * strings with a minute's expiry, one per limited thing, under this prefix (rate-limiter-flexible adds
     * ":<key>"): the `signin` (address|username), `signup` (address) and `ops` (user:… or addr:…) limits
     */
    rateLimit: (limit: string) => k(`limits:${limit}`),
    /** string "1" while maintenance mode is on */
    maintenance: () => k('ops:{config}:maintenance'),
    /** string: JSON configuration of one component (the book's config:<type>:<component>) */
    config: (type: string, component: string) => k(`ops:{config}:${type}:${component}`),

    /** string counter: the last chat id handed out */
    chatIds: () => k('ids:{chat}'),
    /** the keys of one chat, all on the chat's slot */
    chat: (id: string) => {
      const c = (s: string) => k(`chat:{${id}}:${s}`);
      return {
        /** hash: public (0/1), createdAt, createdBy, lastAt (ms of the last message, or of creation) */
        meta: c('meta'),
        /** string counter: the last message id */
        seq: c('seq'),
        /** string counter: 1 at creation, bumped by every message, join and leave; what subscription pollers watch */
        version: c('ver'),
        /** sorted set: member → read position (the last message id they have read) */
        members: c('members'),
        /** sorted set, every score 0: member names, for ZRANGEBYLEX autocomplete */
        names: c('names'),
        /** sorted set: message id → JSON {id, sender, text, sentAt} */
        messages: c('msgs'),
        /** hash: member → "from:to:claimedUntil", gap notifications not yet delivered (an outbox) */
        gaps: c('gaps'),
        /** hash: scheduled message id → the message id it was sent as (so a retried send sends nothing) */
        scheduled: c('scheduled'),
        /** sorted set: scheduled message id → when it was sent (ms); memos older than a day are forgotten */
        scheduledAt: c('scheduled:at'),
        /** sharded pub/sub channel: the doorbell, rung with "<version key> <new version>" (just the key: deleted) */
        bell: c('bell'),
      };
    },
    /** the keys of one lock, all on the lock's slot */
    lock: (name: string) => ({
      /** string with a lease (PX): the holder's random token */
      owner: k(`lock:{${name}}`),
      /** string counter, never expires: the fencing token handed to each holder in turn */
      fence: k(`lock:{${name}}:fence`),
      /** sharded pub/sub channel, rung with "<owner key> free:<token>" when a holder releases */
      bell: k(`lock:{${name}}:bell`),
    }),
    /** sorted set: holder id → expiry (ms, Redis's clock); the counting semaphore `name` */
    semaphore: (name: string) => k(`sem:{${name}}:holders`),
    /** the keys of one task queue, all on the queue's slot */
    queue: (name: string) => {
      const q = (s: string) => k(`queue:{${name}}:${s}`);
      return {
        /** list: task JSON, next to run at the head; ordered by priority, FIFO within one */
        ready: q('ready'),
        /** sorted set: task JSON → when it is due (ms, Redis's clock) */
        delayed: q('delayed'),
        /** list: {error, failedAt, task} JSON of tasks out of attempts, newest first, capped */
        failed: q('failed'),
        /** sorted set: worker id → last heartbeat (ms, Redis's clock) */
        workers: q('workers'),
        /** list: the tasks one worker has taken and not yet acknowledged */
        active: (workerId: string) => q(`active:${workerId}`),
      };
    },
    /** scheduled messages live on the slot of the queue that sends them, so scheduling is one script */
    scheduled: () => {
      const queueName = 'scheduled';
      const s = (x: string) => k(`queue:{${queueName}}:msg:${x}`);
      return {
        queueName,
        /** hash: chatId, sender, text, sendAt, createdAt, status, messageId | reason, task (its queue entry);
         *  expires once the message is sent, cancelled or failed */
        record: (id: string) => s(id),
        /** sorted set: a user's pending scheduled messages in one chat, id → sendAt */
        pending: (username: string, chatId: string) => s(`pending:${username}:${chatId}`),
        /** sorted set: a user's most recently finished ones in one chat, id → finished at (ms) */
        done: (username: string, chatId: string) => s(`done:${username}:${chatId}`),
      };
    },
    /** the IP-to-city index, all on one slot; `loading` ones are filled by an import and swapped in at its end */
    geo: (stage: 'live' | 'loading' = 'live') => {
      const g = (s: string) => k(`geo:{cities}:${s}${stage === 'loading' ? ':loading' : ''}`);
      return {
        /** sorted set, every score 0: "<first hex>|<last hex>|<latitude>|<longitude>|<city id>", by ZRANGEBYLEX */
        ranges4: g('ranges4'),
        ranges6: g('ranges6'),
        /** hash: city id → JSON {city, region, country, latitude, longitude} */
        cities: g('cities'),
        /** string counter bumped by every import: processors reload their local copy when it moves */
        generation: k('geo:{cities}:generation'),
      };
    },
    /** access-log analytics, all on one slot so that finishing a share of a file is one script */
    accessLogs: () => {
      const a = (s: string) => k(`logs:{access}:${s}`);
      return {
        /** string: bytes of uploads held in Redis */
        held: a('held'),
        /** string: the id of the chat that announces uploads to the processors */
        chat: a('chat'),
        upload: (id: string) => ({
          /** hash: filename, bytes, uploader, processors, createdAt, status, lines, errors */
          record: a(`up:${id}`),
          /** string: the file as uploaded (plain or gzip) */
          data: a(`up:${id}:data`),
          /** set: the processors (1..N) done with their share */
          shares: a(`up:${id}:shares`),
        }),
        /** sorted set: place → visits on `day` at `level` (country, region, city) */
        visits: (day: string, level: string) => a(`visits:${day}:${level}`),
      };
    },
    /**
     * hash per precision (seconds): time slot start (s) → count; counter `name` of the book's chapter 5.
     * Counter and statistic names may come from clients (operation names): they own the `count:` and `stats:`
     * families, and the gateway's own telemetry keys live under `telemetry:`, so no name can collide with them.
     */
    counter: (name: string, precision: number) => k(`count:{${name}}:${precision}`),
    /** sorted set, every score 0: the names of the counters (the book's `known:`), at most METRICS_NAMES_MAX */
    counterNames: () => k('telemetry:{names}'),
    /** the keys of one statistic (the book's `stats:<context>:<type>`), all on the context's slot */
    stats: (context: string, type: string) => {
      const st = (s: string) => k(`stats:{${context}}:${type}${s}`);
      return {
        /** sorted set: min, max, count, sum, sumsq of the current hour */
        current: st(''),
        /** string: the hour (ms) the current statistics started */
        start: st(':start'),
        /** the previous hour's, kept when the hour rotates */
        last: st(':last'),
        lastStart: st(':pstart'),
      };
    },
    /**
     * sorted set: context → average of statistic `type` in the hour starting at `hour` (ms); the slowest 100 kept
     * (the book's `slowest:`), expiring with the statistics of that hour
     */
    slowest: (type: string, hour: number) => k(`telemetry:{slowest}:${type}:${hour}`),
    /** the keys of one log (the book's `recent:` and `common:`), all on the log's slot */
    log: (name: string, severity: string) => {
      const l = (s: string) => k(`log:{${name}:${severity}}:${s}`);
      return {
        /** list: the newest 100 lines, newest first */
        recent: l('recent'),
        /** sorted set: message → count this hour */
        common: l('common'),
        /** string: the hour (ms) `common` started */
        start: l('common:start'),
        /** the previous hour's, kept when the hour rotates */
        last: l('common:last'),
        lastStart: l('common:pstart'),
      };
    },
    /** the keys of one user's own mailboxes and indexes, all on the user's slot */
    user: (username: string) => {
      const u = (s: string) => k(`user:{${username}}:${s}`);
      return {
        /** sorted set: chat id → ms joined; an index of memberships, verified against each chat */
        chats: u('chats'),
        /** string counter bumped when `chats` changes: what all-chats subscriptions watch */
        chatsVersion: u('chats:ver'),
        /** list: recent contacts, newest first, at most CONTACTS_MAX */
        contacts: u('contacts'),
        /** sorted set: notification id → JSON {id, kind, text, data, createdAt} (the single-recipient mailbox) */
        inbox: u('inbox'),
        /** string counter: the last notification id */
        inboxSeq: u('inbox:seq'),
        /** sharded pub/sub channel: the doorbell, rung with "<key> <new value>" when `chatsVersion` or `inboxSeq` moves */
        bell: u('bell'),
      };
    },
  };
}
