/** The ads domain: ads indexed by admins, targeted for anyone's pages, learning from clicks in worker tasks. */
import DataLoader from 'dataloader';
import { adCommands } from '../../redis/ads/commands.js';
import type { QueueService } from '../coordination/queues.js';
import type { Base, Domain } from '../shared/domain.js';
import { AdService, LEARN_ADS, type Ad } from './ads.js';

export interface AdLoaders {
  /** An ad, null when there is none: one pipeline per batch. */
  ads: DataLoader<string, Ad | null>;
}

export function createAds(
  { redis, space, config, log }: Base,
  { queues }: { queues: QueueService },
): Domain<{ ads: AdService }, AdLoaders> {
  const ads = new AdService({ commands: adCommands(redis, space), queues, options: config.ads, log });
  return {
    services: { ads },
    loaders: () => ({ ads: new DataLoader((ids) => ads.ads({ ids })) }),
    // one learning task at a time in each shard (its own queue): each learns every pending ad of the shard
    handlers: ads.shards.map((shard) => ({
      queue: shard.adQueue,
      name: LEARN_ADS,
      concurrency: 1,
      run: (_args: unknown, { signal }: { signal: AbortSignal }) => ads.learnPending({ signal, shard }),
    })),
    // and, every minute, ads left pending by a task that ran out of attempts
    jobs: [{ name: LEARN_ADS, everyMs: 60_000, run: (signal) => ads.learnPending({ signal }) }],
  };
}
