/**
 * Every Redis key the product uses, built in one place. Keys that one script, transaction or pipeline
 * touches together share a hash tag (the part in braces), so the product runs unchanged on Redis Cluster.
 * The deployment's KEY_PREFIX goes in front, outside the tag.
 */
export type Keys = ReturnType<typeof createKeys>;

export function createKeys(prefix: string) {
  const k = (s: string) => prefix + s;
  return {
    /** hash: username, passwordHash, createdAt */
    userProfile: (username: string) => k(`user:{${username}}:profile`),
    /** sorted set, every score 0: lowercase usernames, read with ZRANGEBYLEX */
    userDirectory: () => k('users:{dir}:names'),
    /** string: the username a session token (by its SHA-256) belongs to, with an idle expiry */
    session: (tokenHash: string) => k(`session:{${tokenHash}}`),
    /** string "1" while maintenance mode is on */
    maintenance: () => k('ops:{config}:maintenance'),
    /** string: JSON configuration of one component (the book's config:<type>:<component>) */
    config: (type: string, component: string) => k(`ops:{config}:${type}:${component}`),
  };
}
