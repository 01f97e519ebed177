import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Every test file runs twice: against a standalone redis-server and against a three-master Redis Cluster,
// each started by test/support/global-setup.ts. Files use their own key prefix, so they run in parallel.
const project = (name: 'standalone' | 'cluster') => ({
  test: {
    name,
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [project('standalone'), project('cluster')],
    // Two files at once at least: most of a file's time is waiting (process starts, leases, Sentinel elections),
    // not CPU, so vitest's default of one worker per core but one runs a two-core machine one file at a time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
