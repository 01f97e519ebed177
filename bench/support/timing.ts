/** Latency and throughput of a set of calls: p50, p99 (ms) and calls/s, with `matches` summed from each call. */

export interface Timing {
  p50: number;
  p99: number;
  qps: number;
  matches: number;
}

function summary(latencies: number[], seconds: number, matches: number): Timing {
  latencies.sort((a, b) => a - b);
  return {
    p50: latencies[Math.floor(latencies.length * 0.5)]!,
    p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!,
    qps: latencies.length / seconds,
    matches,
  };
}

/** Runs `one` over `queries` with `concurrency` in flight; latencies in ms. */
export async function timed(
  queries: string[],
  concurrency: number,
  one: (q: string) => Promise<number>,
): Promise<Timing> {
  const latencies: number[] = [];
  let next = 0;
  let matches = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < queries.length; i = next++) {
        const t0 = performance.now();
        const found = await one(queries[i]!);
        latencies.push(performance.now() - t0);
        matches += found;
      }
    }),
  );
  return summary(latencies, (performance.now() - started) / 1000, matches);
}

/** The same for a synchronous `one` (in process: one at a time). */
export function timedSync(queries: string[], one: (q: string) => number): Timing {
  const latencies: number[] = [];
  let matches = 0;
  const started = performance.now();
  for (const q of queries) {
    const t0 = performance.now();
    matches += one(q);
    latencies.push(performance.now() - t0);
  }
  return summary(latencies, (performance.now() - started) / 1000, matches);
}
