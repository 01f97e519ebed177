/** The wall of the key list: every domain's keys.ts is joined in domainKeys(), and no two domains give one name. */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEY_FACTORIES, domainKeys } from '../../src/redis/domain-keys.js';
import { keyspace } from '../../src/redis/keys.js';
import { ROOT } from '../support/entries.js';

describe('domain keys', () => {
  it('joins the keys.ts of every folder under src/redis', () => {
    const dir = path.join(ROOT, 'src', 'redis');
    const folders = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'keys.ts')))
      .map((d) => d.name)
      .sort();
    expect(Object.keys(KEY_FACTORIES).sort()).toEqual(folders);
  });

  it('gives each name once', () => {
    const space = keyspace('p:');
    const names = Object.values(KEY_FACTORIES).flatMap((factory) => Object.keys(factory(space)));
    expect(names.length).toBeGreaterThan(40);
    expect(Object.keys(domainKeys(space)).sort()).toEqual([...new Set(names)].sort());
    expect(new Set(names).size).toBe(names.length);
  });
});
