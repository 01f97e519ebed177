/**
 * Trusted documents (PERSISTED_ONLY=on): only documents registered ahead run, those of the manifest
 * (PERSISTED_DOCUMENTS, read at start) and those an admin registered (sent whole with their hash; in Redis, so every
 * process knows them, never evicted, at most APQ_MAX_ENTRIES). Whole documents run only for admins. With
 * PERSISTED_ONLY=off the manifest's documents are found by hash too, before the APQ store.
 *
 * An operator lists and removes the registered ones (`npm run persisted`, the root of trust like `npm run admin`: no
 * acting user). A process keeps a registered document it read in memory for PERSISTED_TRUSTED_RECHECK_MS, then reads
 * it from Redis again, so a removal takes effect in every process within that.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { AppError, badInput, conflict, forbidden } from '../../errors.js';
import type { PersistedQueryCommands } from '../../redis/persisted-queries/commands.js';
import { isRefused } from '../../redis/status.js';
import type { AdminService } from '../users/admins.js';
import { LOCAL_MAX, LOCAL_MAX_CHARS, SHA256, type PersistedQueryOptions } from './store.js';

export interface TrustedDocumentsDeps {
  commands: PersistedQueryCommands;
  admins: AdminService;
  /** The manifest's documents by hash (manifest.ts); empty without one. */
  manifest: ReadonlyMap<string, string>;
  options: PersistedQueryOptions & { only: boolean; trustedRecheckMs: number };
  log: Logger;
}

/** What registering a trusted document did; `full`: APQ_MAX_ENTRIES are registered, it was not. */
export type TrustedRegistration = 'stored' | 'known' | 'too-large' | 'full';

export class TrustedDocuments {
  /** Whether only trusted documents run (PERSISTED_ONLY=on). */
  readonly only: boolean;
  /** Registered documents read from Redis, each for PERSISTED_TRUSTED_RECHECK_MS after it was read. */
  private readonly local: LRUCache<string, string>;
  private readonly commands: PersistedQueryCommands;
  private readonly admins: AdminService;
  private readonly manifest: ReadonlyMap<string, string>;
  private readonly options: PersistedQueryOptions;
  private readonly log: Logger;

  constructor(deps: TrustedDocumentsDeps) {
    ({ commands: this.commands, admins: this.admins, manifest: this.manifest, log: this.log } = deps);
    this.only = deps.options.only;
    this.options = deps.options;
    this.local = new LRUCache<string, string>({
      max: LOCAL_MAX,
      maxSize: LOCAL_MAX_CHARS,
      sizeCalculation: (document) => Math.max(1, document.length),
      ttl: deps.options.trustedRecheckMs,
    });
  }

  /** The manifest's documents by hash. */
  manifestEntries(): IterableIterator<[string, string]> {
    return this.manifest.entries();
  }

  /**
   * The trusted document under `hash`: the manifest's; with PERSISTED_ONLY=on also one an admin registered (kept in
   * memory once read). Undefined when there is none.
   */
  get({ hash }: { hash: string }): string | undefined | Promise<string | undefined> {
    const document = this.known({ hash });
    if (document !== undefined || !this.only || !SHA256.test(hash)) return document;
    return this.commands.readTrusted({ sha256: hash }).then((stored) => {
      if (stored === null) return undefined;
      this.local.set(hash, stored);
      return stored;
    });
  }

  /** The trusted document under `hash` known without Redis: the manifest's, or one read before. */
  known({ hash }: { hash: string }): string | undefined {
    return this.manifest.get(hash) ?? this.local.get(hash);
  }

  /** Whether `hash` is a document of the manifest (never registered in Redis, never removed). */
  inManifest({ hash }: { hash: string }): boolean {
    return this.manifest.has(hash);
  }

  /** The documents admins registered (not the manifest's), each once, read from Redis a batch at a time. */
  async *list(): AsyncGenerator<{ sha256: string; document: string }> {
    const seen = new Set<string>();
    for await (const batch of this.commands.scanTrusted()) {
      for (let i = 0; i + 1 < batch.length; i += 2) {
        const sha256 = batch[i]!;
        if (seen.has(sha256)) continue;
        seen.add(sha256);
        yield { sha256, document: batch[i + 1]! };
      }
    }
  }

  /**
   * Removes the document registered under `sha256` (the hash, once done): every process stops running it within
   * PERSISTED_TRUSTED_RECHECK_MS. NOT_FOUND when none is; a manifest's document is refused (it lives in that file).
   */
  async remove({ sha256 }: { sha256: string }): Promise<string> {
    if (!SHA256.test(sha256)) throw badInput('SHA256', `"${sha256}" is not a SHA-256: 64 lowercase hex digits`);
    if (this.manifest.has(sha256))
      throw conflict(`${sha256} is a document of the manifest (PERSISTED_DOCUMENTS): remove it from that file`);
    if (!(await this.commands.untrust({ sha256 }))) throw new AppError('NOT_FOUND', `no registered document ${sha256}`);
    this.local.delete(sha256);
    return sha256;
  }

  /** Whether `viewer` may run a document sent whole: anyone with PERSISTED_ONLY=off, else admins only. */
  mayRunWhole(viewer: { username: string } | null): boolean | Promise<boolean> {
    if (!this.only) return true;
    return viewer !== null && this.admins.isAdmin({ username: viewer.username });
  }

  /**
   * Registers a document an admin sent whole under `sha256`, its SHA-256 (the caller checked it). Asks Redis even when
   * this process holds the document in memory: the operator may have removed it since (`npm run persisted`).
   */
  async register(
    admin: { username: string },
    { sha256, document }: { sha256: string; document: string },
  ): Promise<TrustedRegistration> {
    if (this.inManifest({ hash: sha256 })) return 'known';
    if (!(await this.admins.isAdmin({ username: admin.username })))
      throw forbidden('only an admin registers trusted documents');
    if (!SHA256.test(sha256)) throw new Error('a trusted document is registered under its SHA-256 in lowercase hex');
    if (Buffer.byteLength(document) > this.options.maxDocumentBytes) return 'too-large';
    const stored = await this.commands.trust({ sha256, document, max: this.options.maxEntries });
    if (isRefused(stored)) {
      this.log.warn(
        { sha256 },
        `trusted documents: APQ_MAX_ENTRIES (${this.options.maxEntries}) registered; not stored`,
      );
      return 'full';
    }
    this.local.set(sha256, document);
    return stored ? 'stored' : 'known';
  }
}
