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
    expect(() => first.add(() => ({ services: { search: 2 } }))).toThrow('the service "search" is given twice');
  });

  it('refuses a loader name, a job name, or a service named like what build() adds', () => {
    const loaders = new Composer(base, {}, [])
      .add(() => ({ services: { a: 1 }, loaders: () => ({ docs: 1 }) }))
      .add(() => ({ services: { b: 1 }, loaders: () => ({ docs: 2 }) }));
    expect(() => loaders.build()).toThrow('the loader "docs" is given twice');
    const job = { name: 'clean', everyMs: 1, run: () => Promise.resolve() };
    const jobs = new Composer(base, {}, [])
      .add(() => ({ services: { a: 1 }, jobs: [job] }))
      .add(() => ({ services: { b: 1 }, jobs: [job] }));
    expect(() => jobs.build()).toThrow('the job "clean" is given twice');
    expect(() => new Composer(base, {}, []).add(() => ({ services: { close: 1 } })).build()).toThrow(
      'the service "close" is given twice',
    );
  });

  it('refuses two task handlers of one queue and name, or two jobs of one name in one domain', () => {
    const job = { name: 'clean', everyMs: 1, run: () => Promise.resolve() };
    const handler = { queue: 'q', name: 'send', run: () => Promise.resolve() };
    const twice = new Composer(base, {}, []).add(() => ({ services: { a: 1 }, jobs: [job, job] }));
    expect(() => twice.build()).toThrow('the job "clean" is given twice');
    const handlers = new Composer(base, {}, [])
      .add(() => ({ services: { a: 1 }, handlers: [handler] }))
      .add(() => ({ services: { b: 1 }, handlers: [handler] }));
    expect(() => handlers.build()).toThrow('the task handler "q/send" is given twice');
  });
});
