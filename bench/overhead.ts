/**
 * What counting and timing every operation costs in HTTP throughput: METRICS on beside off (`npm run bench:overhead`).
 * How it measures: docs/benchmarks.md.
 */
import {
  HOST,
  alternate,
  badCount,
  cpuSeconds,
  freePort,
  graphql,
  httpOk,
  median,
  positiveInt,
  progress,
  runBench,
  signUpBenchUser,
  sleep,
  spawnGateway,
  startRedis,
  waitFor,
  type LoadSample,
  type LoadTarget,
} from './support/processes.js';

const SECONDS = positiveInt('BENCH_SECONDS', 5);
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
const WARMUP_SECONDS = 1;
const CONNECTIONS = 50;
const AIM = 0.9;
/** The gateways' default METRICS_FLUSH_MS (1000), plus time for the flush itself. */
const FLUSH_WAIT_MS = 1500;

const ME_QUERY = 'query Me { me { id } }';
const COUNTER_QUERY = '{ counter(name: "Me", precision: 86400) { count } }';

interface Gateway {
  metrics: 'on' | 'off';
  pid: number;
  url: string;
  auth: Record<string, string>;
  target: LoadTarget;
}

async function startGateway(metrics: 'on' | 'off', redisUrl: string): Promise<Gateway> {
  const port = await freePort();
  progress(`starting gateway METRICS=${metrics} on ${port}`);
  const child = spawnGateway(`gateway METRICS=${metrics}`, {
    NODE_ENV: 'production',
    HOST,
    PORT: String(port),
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    WORKER: 'off',
    KEY_PREFIX: `bench-overhead-${metrics}:`,
    METRICS: metrics,
  });
  const url = `http://${HOST}:${port}`;
  await waitFor(`gateway METRICS=${metrics} /readyz`, () => httpOk(`${url}/readyz`));

  const { username, auth } = await signUpBenchUser(url);
  // One `Me` before the load: a sanity check, and the response every request of the load must get.
  const me = await graphql(`${url}/graphql`, ME_QUERY, auth);
  const meId = (me.data.me as { id?: string } | null)?.id;
  if (meId !== username) throw new Error(`sanity check failed: ${ME_QUERY} gave ${me.text}, expected id "${username}"`);
  progress(`signed up ${username} on METRICS=${metrics}`);

  const body = JSON.stringify({ query: ME_QUERY, operationName: 'Me' });
  return {
    metrics,
    pid: child.proc.pid!,
    url,
    auth,
    target: { name: `metrics ${metrics}`, url: `${url}/graphql`, headers: auth, body, expectBody: me.text },
  };
}

/** The total of a gateway's counter "Me" (every day sample: a run may cross midnight UTC). */
async function countedMe(g: Gateway): Promise<number> {
  const r = await graphql(`${g.url}/graphql`, COUNTER_QUERY, g.auth);
  return (r.data.counter as { count: number }[]).reduce((acc, s) => acc + s.count, 0);
}

async function main(): Promise<number> {
  const redisServer = await startRedis();
  const gateways = [await startGateway('on', redisServer.url), await startGateway('off', redisServer.url)];

  const cpuBefore = gateways.map((g) => cpuSeconds(g.pid));
  const { warmups, samples } = await alternate(
    gateways.map((g) => g.target),
    { rounds: ROUNDS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS },
  );
  const cpuUsed = gateways.map((g, i) => cpuSeconds(g.pid) - cpuBefore[i]!);

  // Throughput.
  const rows = gateways.map((g, i) => {
    const ss = samples[i]!;
    const sum = (k: keyof LoadSample['bad']) => ss.reduce((acc, s) => acc + s.bad[k], 0);
    const served = [warmups[i]!, ...ss].reduce((acc, s) => acc + s.sent, 0);
    return {
      target: g.target.name,
      ...Object.fromEntries(ss.map((s, r) => [`round ${r + 1}`, Math.round(s.rps)])),
      'median req/s': Math.round(median(ss.map((s) => s.rps))),
      'p50 ms': median(ss.map((s) => s.p50)),
      'p99 ms': median(ss.map((s) => s.p99)),
      'CPU µs/req': Math.round((cpuUsed[i]! / served) * 1e6),
      non2xx: sum('non2xx'),
      'errors (incl. timeouts)': sum('errors'),
      mismatches: sum('mismatches'),
    };
  });
  const [on, off] = rows as [(typeof rows)[0], (typeof rows)[0]];
  const ratio = on['median req/s'] / off['median req/s'];
  console.log(
    `\n${ROUNDS} rounds x ${SECONDS}s, ${CONNECTIONS} connections, pipelining 1, ${ME_QUERY}, gateways alternating ABBA`,
  );
  console.table(rows);
  console.log(
    `ratio median(metrics on)/median(metrics off) = ${ratio.toFixed(3)}  (aim >= ${AIM}: ${ratio >= AIM ? 'met' : 'NOT met'})`,
  );
  console.log(
    `CPU µs/req: the gateway process's CPU over warm-ups and rounds (its idle time included) per request sent to it`,
  );

  // Counting: wait for a flush, then compare each gateway's counter "Me" with the requests it got.
  progress(`waiting ${FLUSH_WAIT_MS} ms for the metrics flush`);
  await sleep(FLUSH_WAIT_MS);
  const counts = await Promise.all(
    gateways.map(async (g, i) => {
      const runs = [warmups[i]!, ...samples[i]!];
      // +1: the sanity check's `Me` before the load.
      const sent = runs.reduce((acc, s) => acc + s.sent, 1);
      const answered = runs.reduce((acc, s) => acc + s.answered, 1);
      return { gateway: g.target.name, 'counted "Me"': await countedMe(g), sent, answered };
    }),
  );
  console.log(
    '\ncounter "Me" (precision 86400) after the load; sent and answered include warm-ups and the one sanity-check `Me`',
  );
  console.table(counts);

  const problems: string[] = [];
  const [countOn, countOff] = counts as [(typeof counts)[0], (typeof counts)[0]];
  if (countOn['counted "Me"'] === 0) problems.push('the METRICS=on gateway counted nothing');
  else if (countOn['counted "Me"'] < countOn.answered || countOn['counted "Me"'] > countOn.sent) {
    problems.push(
      `the METRICS=on gateway counted ${countOn['counted "Me"']}, expected ${countOn.answered} to ${countOn.sent}`,
    );
  }
  if (countOff['counted "Me"'] !== 0)
    problems.push(`the METRICS=off gateway counted ${countOff['counted "Me"']}, expected nothing`);
  const failed = rows.filter((_, i) => samples[i]!.some((s) => badCount(s) > 0));
  if (failed.length > 0) problems.push(`bad responses from ${failed.map((r) => r.target).join(', ')}`);
  if (problems.length > 0) {
    console.log(`FAILED: ${problems.join('; ')}; the figures are not valid`);
    return 1;
  }
  console.log(
    `counting checked: METRICS=on counted ${countOn['counted "Me"']} of ${countOn.sent} sent, METRICS=off none`,
  );
  return 0;
}

await runBench(main);
