/**
 * The index's shards: a document (and a search's result description) lives in shard crc32(id) mod SEARCH_SHARDS.
 * The count is written into the index on first use; a process configured with another count refuses to serve
 * rather than look for documents in the wrong shards.
 */
import { crc32 } from 'node:zlib';
import type { DocumentCommands, Shard } from '../../redis/documents/commands.js';

export interface ShardsDeps {
  commands: DocumentCommands;
  /** SEARCH_SHARDS. */
  count: number;
}

export class Shards {
  readonly all: readonly Shard[];
  readonly count: number;
  private readonly commands: DocumentCommands;
  private checked: Promise<void> | null = null;

  constructor(deps: ShardsDeps) {
    ({ commands: this.commands, count: this.count } = deps);
    this.all = this.commands.shards({ count: this.count });
  }

  /** The shard of a document id or result id. */
  of(name: string): Shard {
    return this.all[crc32(name) % this.count]!;
  }

  /** `ids` by shard, each with its positions in `ids`. */
  group(ids: readonly string[]): Map<Shard, { ids: string[]; at: number[] }> {
    const groups = new Map<Shard, { ids: string[]; at: number[] }>();
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
    this.checked ??= this.commands
      .claimShardCount({ count: this.count })
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
