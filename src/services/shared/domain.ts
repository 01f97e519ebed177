/**
 * What a domain is made from and what it gives back: each services/<domain>/index.ts exports a factory taking the
 * Base and the services of the domains before it, and returns its services plus what the central files compose
 * (per-operation DataLoaders, the worker's task handlers and periodic jobs, and how to stop).
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { RedisClient } from '../../redis/clients.js';
import type { Keyspace } from '../../redis/keys.js';
import type { ReplicaWait } from '../../redis/replicas.js';

export interface Base {
  redis: RedisClient;
  space: Keyspace;
  /** What the commands of writes that must survive a failover wait on (REDIS_WAIT_REPLICAS). */
  replicated: ReplicaWait;
  config: Config;
  log: Logger;
  /** The clock of telemetry (tests move it). */
  now: () => number;
}

export interface Domain<S, L = object> {
  services: S;
  /** Per-operation DataLoaders for a viewer (a username, or null). */
  loaders?: (viewer: string | null) => L;
  /** What the worker runs for this domain. */
  handlers?: TaskHandler[];
  jobs?: PeriodicJob[];
  /** What the domain reports to `GET /metrics`, read at each scrape. */
  metrics?: DomainMetric[];
  /**
   * Stops what the domain runs (timers, pollers); domains stop in the reverse of their creation. What it still
   * writes to Redis (buffered telemetry) it waits for at most `timeoutMs`.
   */
  close?: (timeoutMs: number) => Promise<void>;
}

/** A figure of a domain for `GET /metrics` (Prometheus): its values are read when the metrics are scraped. */
export interface DomainMetric {
  /** The Prometheus name, without the product's prefix: `[a-z_]+`, counters ending in `_total`. */
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  /** Its values now, one per label set; label values come from a bounded set (never straight from a client). */
  collect(): MetricValue[] | Promise<MetricValue[]>;
}

export interface MetricValue {
  labels?: Record<string, string>;
  value: number;
}

export interface TaskContext {
  taskId: string;
  /** 1 on the first run. */
  attempt: number;
  /** Aborted when the worker stops before the task finished (it is then returned to the queue). */
  signal: AbortSignal;
}

export interface TaskHandler {
  queue: string;
  name: string;
  /** At most this many of these tasks run at once across every worker; unlimited when absent. */
  concurrency?: number;
  /** Resolves when done; a rejection is a failed attempt. Must be safe to run again (delivery is at least once). */
  run(args: unknown, context: TaskContext): Promise<void>;
}

/** Work a worker runs every `everyMs`, under a lock: one worker at a time across every process. */
export interface PeriodicJob {
  name: string;
  everyMs: number;
  run(signal: AbortSignal): Promise<void>;
}
