/**
 * The index's shards: a document (and a search's result description) lives in shard crc32(id) mod SEARCH_SHARDS.
 * The count is written into the index on first use; a process configured with another count refuses to serve
 * rather than look for documents in the wrong shards.
 */
import { crc32 } from 'node:zlib';
import type { RedisClient } from '../../redis/clients.js';
import { claimShardCount } from '../../redis/documents/commands.js';
import type { DocumentKeys, ShardKeys } from '../../redis/documents/keys.js';

export class Shards {
  readonly all: readonly ShardKeys[];
  private checked: Promise<void> | null = null;

  constructor(
    private readonly redis: RedisClient,
    keys: DocumentKeys,
    readonly count: number,
  ) {
    this.all = Array.from({ length: count }, (_, n) => keys.shard(n));
  }

  /** The shard of a document id or result id. */
  of(name: string): ShardKeys {
    return this.all[crc32(name) % this.count]!;
  }

  /** `ids` by shard, each with its positions in `ids`. */
  group(ids: readonly string[]): Map<ShardKeys, { ids: string[]; at: number[] }> {
    const groups = new Map<ShardKeys, { ids: string[]; at: number[] }>();
    ids.forEach((id, i) => {
      const shard = this.of(id);
      let g = groups.get(shard);
      if (!g) groups.set(shard, (g = { ids: [], at: [] }));
      g.ids.push(id);
      g.at.push(i);
    });
    return groups;
  }

  /** Resolves once the stored shard count is known to be this process's. */
  ready(): Promise<void> {
    this.checked ??= claimShardCount(this.redis, this.all[0]!, this.count)
      .then((stored) => {
        if (stored !== this.count)
          throw new Error(
            `the documents index was built with SEARCH_SHARDS=${stored}, this process has ${this.count}: set it back (changing it needs a new index)`,
          );
      })
      .catch((err: unknown) => {
        this.checked = null;
        throw err;
      });
    return this.checked;
  }
}
