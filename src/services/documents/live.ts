/**
 * Live documents: `documentChanged` follows one document through the process's mailbox poller. Each change of a
 * document (index, replace, vote, delete) moves its head inside the script that makes it and rings its doorbell
 * (src/redis/lib/live-document.lua); the poller wakes the document's subscriptions here, and each reads the document
 * as its viewer sees it. An idle subscription costs no Redis command beyond the poller's audit of its head. The
 * protocol: docs/search.md "Live documents".
 */
import { Repeater } from '@repeaterjs/repeater';
import type { Logger } from 'pino';
import type { DocumentCommands, Shard } from '../../redis/documents/commands.js';
import type { MailboxPoller } from '../mailbox/poller.js';
import type { Shards } from '../shared/shards.js';
import { Stop } from '../shared/stop.js';
import { parseDocumentId, type DocumentService, type DocumentSummary } from './documents.js';

/** After a failed read (Redis away), a subscription waits this long and reads again. */
const RETRY_MS = 1000;

export interface LiveDocumentDeps {
  commands: DocumentCommands;
  shards: Shards<Shard>;
  documents: DocumentService;
  poller: MailboxPoller;
  log: Logger;
}

export class LiveDocumentService {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards<Shard>;
  private readonly documents: DocumentService;
  private readonly poller: MailboxPoller;
  private readonly log: Logger;

  constructor(deps: LiveDocumentDeps) {
    ({
      commands: this.commands,
      shards: this.shards,
      documents: this.documents,
      poller: this.poller,
      log: this.log,
    } = deps);
  }

  /**
   * Document `id` as `viewer` sees it (with its content when `content`) at once, null when there is none, then
   * again after each change: null once it is deleted, the document again if it is indexed anew. A read that finds
   * what was delivered last (an audit, a ring of a change already read) delivers nothing. The first delivery is
   * a fresh read, so a client that subscribes again after losing its connection gets the current state.
   */
  documentChanged(viewer: string, input: { id: string; content: boolean }): Repeater<DocumentSummary | null> {
    const id = parseDocumentId(input.id);
    const read = async (): Promise<DocumentSummary | null> => {
      const [doc] = await (input.content
        ? this.documents.documents(viewer, { ids: [id] })
        : this.documents.summaries(viewer, { ids: [id] }));
      return doc ?? null;
    };
    return new Repeater<DocumentSummary | null>(async (push, stopped) => {
      await this.shards.ready();
      let moved = true;
      let wake: (() => void) | undefined;
      const stop = new Stop(stopped, () => wake?.());
      // Watched before the first read: a change between the two wakes this subscription again.
      const unwatch = this.poller.watch(this.commands.documentHead({ shard: this.shards.of(id), id }), () => {
        moved = true;
        wake?.();
      });
      let last: string | undefined;
      try {
        while (!stop.stopped) {
          if (!moved) {
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
            continue;
          }
          moved = false;
          let doc: DocumentSummary | null;
          try {
            doc = await read();
          } catch (err) {
            this.log.warn({ err, id }, 'documentChanged read failed; retrying');
            moved = true;
            await stop.delay(RETRY_MS);
            continue;
          }
          const seen = JSON.stringify(doc);
          if (seen === last) continue;
          last = seen;
          await push(doc);
        }
      } finally {
        unwatch();
      }
    });
  }
}
