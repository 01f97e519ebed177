/** Keys of operations control: maintenance, configuration, rate limits. */
import type { Keyspace } from '../keys.js';

export type OpsKeys = ReturnType<typeof opsKeys>;

export function opsKeys({ key, prefixed }: Keyspace) {
  return {
    /**
     * strings with a minute's expiry, one per limited thing, under this prefix (rate-limiter-flexible adds
     * ":<key>"): the `signin` (address|username), `signup` (address) and `ops` (user:… or addr:…) limits
     */
    rateLimit: (limit: string) => prefixed(`limits:${limit}`),
    /** string "1" while maintenance mode is on */
    maintenance: () => key('ops', 'config', 'maintenance'),
    /** string: JSON configuration of one component (the book's config:<type>:<component>) */
    config: (type: string, component: string) => key('ops', 'config', type, component),
  };
}
