/** The part of the redlock package (4.x, untyped: @types/redlock targets the old ioredis types) the benchmark uses. */
declare module 'redlock' {
  import type { Redis } from 'ioredis';

  interface Lock {
    unlock(): Promise<void>;
    extend(ttl: number): Promise<Lock>;
  }

  interface Options {
    driftFactor?: number;
    retryCount?: number;
    retryDelay?: number;
    retryJitter?: number;
  }

  class Redlock {
    constructor(clients: Redis[], options?: Options);
    lock(resource: string | string[], ttl: number): Promise<Lock>;
  }

  export = Redlock;
}
