/**
 * Documents (the book's chapter 7 index_document, made atomic): creating, replacing, deleting and voting are each
 * one script in the document's shard, so no search ever sees half a document. A change first reads the version
 * and the words the document has (to drop the postings of the words it loses), then the script checks the version
 * is still that one; if another change came between, it reads again.
 */
import { Buffer } from 'node:buffer';
import { badInput, conflict, forbidden, notFound } from '../../errors.js';
import type { DocumentCommands, DocumentState, Shard } from '../../redis/documents/commands.js';
import { isRefused, STATUS, type Refused } from '../../redis/status.js';
import { whileChanged } from '../shared/changes.js';
import type { BloomFilter, Cache } from '../cache/index.js';
import { userText } from '../shared/text.js';
import type { AdminService } from '../users/admins.js';
import type { Shards } from '../shared/shards.js';
import { stringToScore, termFrequencies, titleKey } from './text.js';

/** A document without its content (what a page that shows no content loads). */
export interface DocumentSummary {
  id: string;
  title: string;
  author: string;
  updatedAt: Date;
  votes: number;
  viewerVoted: boolean;
}

export interface Document extends DocumentSummary {
  content: string;
}

const DOCUMENT_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
export const TITLE_MAX = 200;

/** A document id as given (the `id` argument); BAD_USER_INPUT when it cannot be one. */
export function parseDocumentId(raw: string): string {
  if (!DOCUMENT_ID.test(raw)) throw badInput('id', 'must be 1 to 64 of A-Z, a-z, 0-9, "_", ".", ":" or "-"');
  return raw;
}

const LEASE_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** An editing lease's token as given (`token`, `leaseToken`); BAD_USER_INPUT when it cannot be one. */
export function parseLeaseToken(argument: string, raw: string): string {
  if (!LEASE_TOKEN.test(raw)) throw badInput(argument, 'must be a lease token (1 to 64 of A-Z, a-z, 0-9, "_" or "-")');
  return raw;
}

/** The `leaseToken` a write shows, '' for none. */
const leaseTokenOf = (raw: string | null | undefined): string =>
  raw == null ? '' : parseLeaseToken('leaseToken', raw);

export interface DocumentServiceDeps {
  commands: DocumentCommands;
  shards: Shards<Shard>;
  admins: AdminService;
  /** SEARCH_TITLE_WEIGHT and MAX_DOCUMENT_BYTES. */
  options: { titleWeight: number; documentBytes: number };
  /**
   * Which ids exist: every id ever created is added to `filter` before its document is created (a crash between
   * leaves an id the filter has and the index lacks, which costs a read, never a wrong refusal), and `absent` keeps
   * for a while the ids a read found nothing for (deleted ones, and the filter's false positives).
   */
  known: { filter: BloomFilter; absent: Cache<DocumentSummary> };
}

export class DocumentService {
  private readonly commands: DocumentCommands;
  private readonly shards: Shards<Shard>;
  private readonly admins: AdminService;
  private readonly options: { titleWeight: number; documentBytes: number };
  private readonly known: DocumentServiceDeps['known'];

  constructor(deps: DocumentServiceDeps) {
    ({
      commands: this.commands,
      shards: this.shards,
      admins: this.admins,
      options: this.options,
      known: this.known,
    } = deps);
  }

  /**
   * Creates or replaces document `id` as `user` (only its author or an admin replaces it); while it is leased, only
   * with the live lease's `leaseToken` (else CONFLICT).
   */
  async indexDocument(
    user: string,
    input: { id: string; title: string; content: string; leaseToken?: string | null },
  ): Promise<Document> {
    const id = parseDocumentId(input.id);
    const leaseToken = leaseTokenOf(input.leaseToken);
    const title = userText(input.title, 'title', TITLE_MAX);
    const content = input.content.toWellFormed();
    if (Buffer.byteLength(content) > this.options.documentBytes)
      throw badInput('content', `must be at most ${this.options.documentBytes} bytes of UTF-8`);
    const { frequencies, length } = termFrequencies({ title, content, titleWeight: this.options.titleWeight });
    const key = titleKey(title);
    let author = user;
    let created = false;
    const stored = await this.change({ id, user }, async (shard, state, isAdmin) => {
      author = state.author ?? user;
      created = state.version === '0';
      if (created) await this.known.filter.add({ item: id });
      return this.commands.indexDocument({
        shard,
        id,
        expected: state.version,
        user,
        isAdmin,
        leaseToken,
        title,
        titleKey: key,
        titleScore: stringToScore(key),
        content,
        length,
        frequencies,
        dropped: state.words.filter((w) => !frequencies.has(w)),
      });
    });
    // A lookup of the id before it existed may have left a negative entry.
    if (created) await this.known.absent.invalidate({ keys: [id] });
    const { updatedMs, votes, viewerVoted } = stored;
    return { id, title, content, author, updatedAt: new Date(updatedMs), votes, viewerVoted };
  }

  /**
   * Deletes document `id` as `user` (its author or an admin), and its editing lease; while it is leased, only with
   * the live lease's `leaseToken` (else CONFLICT). False when there was none.
   */
  async deleteDocument(user: string, input: { id: string; leaseToken?: string | null }): Promise<boolean> {
    const id = parseDocumentId(input.id);
    const leaseToken = leaseTokenOf(input.leaseToken);
    return this.change({ id, user }, (shard, state, isAdmin) =>
      this.commands.deleteDocument({
        shard,
        id,
        expected: state.version,
        user,
        isAdmin,
        leaseToken,
        words: state.words,
      }),
    );
  }

  /** `user` votes for document `id`, once (voting again changes nothing). */
  async voteDocument(user: string, input: { id: string }): Promise<Document> {
    const id = parseDocumentId(input.id);
    await this.shards.ready();
    const votes = await this.commands.voteDocument({ shard: this.shards.of(id), id, user });
    if (isRefused(votes)) throw refusal(votes, id);
    return this.documentNow({ id, user });
  }

  /**
   * Document `id` (parsed) as `read` loads it, unless it is known not to exist: an id the Bloom filter never had, or
   * one a read found nothing for a short while ago (a negative entry), is null without a read of the index.
   */
  lookup<D extends DocumentSummary>({ id, read }: { id: string; read: () => Promise<D | null> }): Promise<D | null> {
    return this.known.absent.get({ key: id, compute: read }) as Promise<D | null>;
  }

  /**
   * Documents `ids` of the index as `viewer` sees them (null where none), one round trip per shard. The ids are not
   * parsed (they come from the index, or were parsed by the caller).
   */
  documents(viewer: string | null, { ids }: { ids: readonly string[] }): Promise<(Document | null)[]> {
    return this.read({ ids, viewer, content: true }) as Promise<(Document | null)[]>;
  }

  /** The same without their content, which may be most of their bytes. */
  summaries(viewer: string | null, { ids }: { ids: readonly string[] }): Promise<(DocumentSummary | null)[]> {
    return this.read({ ids, viewer, content: false });
  }

  private async read({ ids, viewer, content }: { ids: readonly string[]; viewer: string | null; content: boolean }) {
    await this.shards.ready();
    const out: (DocumentSummary | Document | null)[] = ids.map(() => null);
    await Promise.all(
      [...this.shards.group(ids)].map(async ([shard, group]) => {
        const stored = await this.commands.readDocuments({ shard, ids: group.ids, viewer, content });
        stored.forEach((d, i) => {
          if (!d) return;
          const { updatedMs, ...rest } = d;
          out[group.at[i]!] = { id: group.ids[i]!, ...rest, updatedAt: new Date(updatedMs) };
        });
      }),
    );
    return out;
  }

  /** The document as it is now (after a change by `user`). */
  private async documentNow({ id, user }: { id: string; user: string }): Promise<Document> {
    const [doc] = await this.documents(user, { ids: [id] });
    if (!doc) throw notFound(`document "${id}"`);
    return doc;
  }

  /**
   * Runs a change of document `id` by `user` against the state it read, reading again while other changes of the
   * document come between. Whether `user` is an admin is asked only when the document is someone else's.
   */
  private async change<T>(
    { id, user }: { id: string; user: string },
    run: (shard: Shard, state: DocumentState, isAdmin: boolean) => Promise<T | Refused>,
  ): Promise<T> {
    await this.shards.ready();
    const shard = this.shards.of(id);
    const result = await whileChanged(`document "${id}"`, async () => {
      const state = await this.commands.readDocumentState({ shard, id });
      const isAdmin = state.author !== null && state.author !== user && (await this.admins.isAdmin({ username: user }));
      return run(shard, state, isAdmin);
    });
    if (isRefused(result)) throw refusal(result, id);
    return result;
  }
}

/** The error for a documents script's refusal (of a change, or of a lease step). */
export function refusal({ refused }: Refused, id: string): Error {
  switch (refused) {
    case STATUS.NOT_FOUND:
      return notFound(`document "${id}"`);
    case STATUS.NOT_OWNER:
      return forbidden(`document "${id}" belongs to another user; only its author or an admin changes it`);
    case STATUS.LEASED:
      return conflict(
        `document "${id}" is leased for editing and the lease token given is not its live lease's (none given, or one that expired or was released): acquire the lease`,
      );
    default:
      return new Error(`unexpected documents script status ${refused}`);
  }
}
