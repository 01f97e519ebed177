/**
 * The key rule, written once: `<KEY_PREFIX><family>:{<tag>}:<part>...`. Keys that one script, transaction or
 * pipeline touches together share the tag (the part in braces), so the product runs unchanged on Redis Cluster;
 * the deployment's KEY_PREFIX goes in front, outside the tag. Each domain names its keys in redis/<domain>/keys.ts.
 */
export interface Keyspace {
  /** A key of `family` on the slot of `tag`. */
  key: (family: string, tag: string, ...parts: (string | number)[]) => string;
  /** A name under the deployment's prefix whose layout a library decides (rate-limiter-flexible's keys). */
  prefixed: (name: string) => string;
}

export function keyspace(prefix: string): Keyspace {
  return {
    key: (family, tag, ...parts) => `${prefix}${family}:{${tag}}${parts.map((p) => `:${p}`).join('')}`,
    prefixed: (name) => prefix + name,
  };
}
