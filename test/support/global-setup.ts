/** Starts the Redis of this vitest project (standalone or cluster) once and hands its address to the tests. */
import type { TestProject } from 'vitest/node';
import { startCluster, startStandalone, type TestRedis } from './redis-servers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redis: TestRedis;
  }
}

export default async function setup(project: TestProject) {
  const running = project.name === 'cluster' ? await startCluster() : await startStandalone();
  project.provide('redis', running.target);
  return () => running.stop();
}
