/** The wall of composition: two domains that give one name are refused when the services are composed. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { keyspace } from '../../src/redis/keys.js';
import { Composer } from '../../src/services/index.js';
import type { Base } from '../../src/services/shared/domain.js';
import { testConfig } from '../support/app.js';

const base = { space: keyspace('p:'), config: testConfig(), log: createLogger('silent'), now: Date.now } as Base;

describe('composing domains', () => {
  it('refuses a service name that an earlier domain gave', () => {
    const first = new Composer(base, {}, []).add(() => ({ services: { search: 1 } }));
    expect(() => first.add(() => ({ services: { search: 2 } }))).toThrow('two domains give the service "search"');
  });

  it('refuses a loader name, a job name, or a service named like what build() adds', () => {
    const loaders = new Composer(base, {}, [])
      .add(() => ({ services: { a: 1 }, loaders: () => ({ docs: 1 }) }))
      .add(() => ({ services: { b: 1 }, loaders: () => ({ docs: 2 }) }));
    expect(() => loaders.build()).toThrow('two domains give the loader "docs"');
    const job = { name: 'clean', everyMs: 1, run: () => Promise.resolve() };
    const jobs = new Composer(base, {}, [])
      .add(() => ({ services: { a: 1 }, jobs: [job] }))
      .add(() => ({ services: { b: 1 }, jobs: [job] }));
    expect(() => jobs.build()).toThrow('two domains give the job "clean"');
    expect(() => new Composer(base, {}, []).add(() => ({ services: { close: 1 } })).build()).toThrow(
      'two domains give the service "close"',
    );
  });

  it('composes the product without a clash', () => {
    expect(() => new Composer(base, {}, []).add(() => ({ services: { a: 1 } })).build()).not.toThrow();
  });
});
