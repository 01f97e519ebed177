/**
 * A domain's shards: a thing named `id` lives in shard crc32(id) mod their number. The number is written into the
 * data on first use, and a process configured with another refuses to serve rather than look in the wrong shards
 * (the documents' index over SEARCH_SHARDS, the ads over one shard per master).
 */
import { crc32 } from 'node:zlib';

export interface ShardsDeps<S> {
  /** The shards, shard n at n. */
  all: readonly S[];
  /** Stores `count` as the data's number of shards when it has none; answers the stored number. */
  claimCount: (a: { count: number }) => Promise<number>;
  /** Why a process with `count` shards refuses data placed in `stored`. */
  refusal: (a: { stored: number; count: number }) => string;
}

export class Shards<S> {
  readonly all: readonly S[];
  readonly count: number;
  private readonly deps: ShardsDeps<S>;
  private checked: Promise<void> | null = null;

  constructor(deps: ShardsDeps<S>) {
    this.deps = deps;
    this.all = deps.all;
    this.count = deps.all.length;
  }

  /** The shard of `id`. */
  of(id: string): S {
    return this.all[crc32(id) % this.count]!;
  }

  /** `ids` by shard, each with its positions in `ids`. */
  group(ids: readonly string[]): Map<S, { ids: string[]; at: number[] }> {
    const groups = new Map<S, { ids: string[]; at: number[] }>();
    ids.forEach((id, i) => {
      const shard = this.of(id);
      let g = groups.get(shard);
      if (!g) groups.set(shard, (g = { ids: [], at: [] }));
      g.ids.push(id);
      g.at.push(i);
    });
    return groups;
  }

  /** Resolves once the stored number of shards is known to be this process's. */
  ready(): Promise<void> {
    this.checked ??= this.deps
      .claimCount({ count: this.count })
      .then((stored) => {
        if (stored !== this.count) throw new Error(this.deps.refusal({ stored, count: this.count }));
      })
      .catch((err: unknown) => {
        this.checked = null;
        throw err;
      });
    return this.checked;
  }
}
