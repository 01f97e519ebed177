/**
 * Trusted documents (PERSISTED_ONLY=on): only documents registered ahead run, those of the manifest
 * (PERSISTED_DOCUMENTS, read at start) and those an admin registered (sent whole with their hash; in Redis, so every
 * process knows them, never evicted, at most APQ_MAX_ENTRIES). Whole documents run only for admins. With
 * PERSISTED_ONLY=off the manifest's documents are found by hash too, before the APQ store.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { forbidden } from '../../errors.js';
import type { PersistedQueryCommands } from '../../redis/persisted-queries/commands.js';
import { isRefused } from '../../redis/status.js';
import type { AdminService } from '../users/admins.js';
import { LOCAL_MAX, LOCAL_MAX_CHARS, SHA256, type PersistedQueryOptions } from './store.js';

export interface TrustedDocumentsDeps {
  commands: PersistedQueryCommands;
  admins: AdminService;
  /** The manifest's documents by hash (manifest.ts); empty without one. */
  manifest: ReadonlyMap<string, string>;
  options: PersistedQueryOptions & { only: boolean };
  log: Logger;
}

/** What registering a trusted document did; `full`: APQ_MAX_ENTRIES are registered, it was not. */
export type TrustedRegistration = 'stored' | 'known' | 'too-large' | 'full';

export class TrustedDocuments {
  /** Whether only trusted documents run (PERSISTED_ONLY=on). */
  readonly only: boolean;
  private readonly local = new LRUCache<string, string>({
    max: LOCAL_MAX,
    maxSize: LOCAL_MAX_CHARS,
    sizeCalculation: (document) => Math.max(1, document.length),
  });
  private readonly commands: PersistedQueryCommands;
  private readonly admins: AdminService;
  private readonly manifest: ReadonlyMap<string, string>;
  private readonly options: PersistedQueryOptions;
  private readonly log: Logger;

  constructor(deps: TrustedDocumentsDeps) {
    ({ commands: this.commands, admins: this.admins, manifest: this.manifest, log: this.log } = deps);
    this.only = deps.options.only;
    this.options = deps.options;
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

  /** Whether `viewer` may run a document sent whole: anyone with PERSISTED_ONLY=off, else admins only. */
  mayRunWhole(viewer: { username: string } | null): boolean | Promise<boolean> {
    if (!this.only) return true;
    return viewer !== null && this.admins.isAdmin({ username: viewer.username });
  }

  /** Registers a document an admin sent whole under `sha256`, its SHA-256 (the caller checked it). */
  async register(
    admin: { username: string },
    { sha256, document }: { sha256: string; document: string },
  ): Promise<TrustedRegistration> {
    if (this.known({ hash: sha256 }) !== undefined) return 'known';
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
