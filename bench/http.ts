/**
 * HTTP throughput of the gateway against a bare graphql-yoga baseline (`npm run bench:http`).
 *
 * Starts its own redis-server, the gateway and bench/support/bare-yoga.ts as child processes on free loopback
 * ports, then runs autocannon (POST /graphql, 50 connections, no pipelining) alternately against
 *   (a) the gateway, `{ me { id } }` with a bearer token (one Redis GETEX per request), and
 *   (b) the bare yoga, `{ __typename }`,
 * in ABBA order for BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS seconds (default 5), after a discarded 1 s warm-up of each.
 * Alternating rounds and taking medians tames the drift of a shared, noisy machine. Every response must be a 200
 * with the expected body (autocannon's expectBody); any non-2xx, error, timeout or mismatch exits 1, so a broken
 * gateway cannot post a good number. Progress goes to stderr, the result table to stdout.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { HOST, assertAllRunning, freePort, graphql, httpOk, median, positiveInt, progress, runBench, start, startRedis, waitFor } from './support/processes.js';

const SECONDS = positiveInt('BENCH_SECONDS', 5);
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
const WARMUP_SECONDS = 1;
const CONNECTIONS = 50;
const AIM = 0.7;

// ---------------------------------------------------------------------------------------------------------------
// Measuring

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The exact response body every request must get. */
  expectBody: string;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  bad: { non2xx: number; errors: number; timeouts: number; mismatches: number };
}

async function cannon(target: Target, seconds: number): Promise<Sample> {
  const r = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    expectBody: target.expectBody,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
  });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bad: { non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, mismatches: r.mismatches },
  };
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const redisServer = await startRedis();
  const [gatewayPort, barePort] = [await freePort(), await freePort()];
  const env = { NODE_ENV: 'production', HOST };

  progress(`starting gateway on ${gatewayPort} and bare yoga on ${barePort}`);
  start('gateway', process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    ...env,
    PORT: String(gatewayPort),
    REDIS_URL: redisServer.url,
    LOG_LEVEL: 'silent',
  });
  start('bare yoga', process.execPath, ['--import', 'tsx', 'bench/support/bare-yoga.ts'], { ...env, PORT: String(barePort) });
  const gatewayUrl = `http://${HOST}:${gatewayPort}`;
  const bareUrl = `http://${HOST}:${barePort}`;
  await waitFor('gateway /readyz', () => httpOk(`${gatewayUrl}/readyz`));
  await waitFor('bare yoga /health', () => httpOk(`${bareUrl}/health`));

  const username = `bench_${randomBytes(6).toString('hex')}`;
  const signUp = await graphql(
    `${gatewayUrl}/graphql`,
    'mutation ($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }',
    {},
    { u: username, p: 'benchpassword' },
  );
  const token = (signUp.data.signUp as { token: string }).token;
  progress(`signed up ${username}`);

  const meQuery = '{ me { id } }';
  const auth = { authorization: `Bearer ${token}` };
  const me = await graphql(`${gatewayUrl}/graphql`, meQuery, auth);
  const meId = (me.data.me as { id?: string } | null)?.id;
  if (meId !== username) throw new Error(`sanity check failed: { me { id } } gave ${me.text}, expected id "${username}"`);
  const bare = await graphql(`${bareUrl}/graphql`, '{ __typename }');

  const targets: Target[] = [
    { name: 'gateway { me { id } }', url: `${gatewayUrl}/graphql`, headers: auth, body: JSON.stringify({ query: meQuery }), expectBody: me.text },
    { name: 'bare yoga { __typename }', url: `${bareUrl}/graphql`, headers: {}, body: JSON.stringify({ query: '{ __typename }' }), expectBody: bare.text },
  ];

  for (const t of targets) {
    progress(`warm-up ${t.name} (${WARMUP_SECONDS}s, discarded)`);
    await cannon(t, WARMUP_SECONDS);
  }
  const samples = targets.map((): Sample[] => []);
  for (let round = 1; round <= ROUNDS; round++) {
    // Swap the order every other round (ABBA) so neither target always runs right after the other.
    const order = round % 2 ? [0, 1] : [1, 0];
    for (const i of order) {
      const t = targets[i]!;
      progress(`round ${round}/${ROUNDS}: ${t.name} (${SECONDS}s)`);
      const s = await cannon(t, SECONDS);
      assertAllRunning();
      samples[i]!.push(s);
      const bad = Object.entries(s.bad).filter(([, n]) => n > 0);
      progress(`  ${s.rps.toFixed(0)} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms${bad.length ? `, BAD: ${bad.map(([k, n]) => `${k}=${n}`).join(' ')}` : ''}`);
    }
  }

  // Report.
  const rows = targets.map((t, i) => {
    const ss = samples[i]!;
    const sum = (k: keyof Sample['bad']) => ss.reduce((acc, s) => acc + s.bad[k], 0);
    return {
      target: t.name,
      ...Object.fromEntries(ss.map((s, r) => [`round ${r + 1}`, Math.round(s.rps)])),
      'median req/s': Math.round(median(ss.map((s) => s.rps))),
      'p50 ms': median(ss.map((s) => s.p50)),
      'p99 ms': median(ss.map((s) => s.p99)),
      non2xx: sum('non2xx'),
      errors: sum('errors') + sum('timeouts'),
      mismatches: sum('mismatches'),
    };
  });
  const [gw, base] = rows as [(typeof rows)[0], (typeof rows)[0]];
  const ratio = gw['median req/s'] / base['median req/s'];
  console.log(`\n${ROUNDS} rounds x ${SECONDS}s, ${CONNECTIONS} connections, pipelining 1, targets alternating ABBA`);
  console.table(rows);
  console.log(`ratio median(gateway)/median(baseline) = ${ratio.toFixed(3)}  (aim >= ${AIM}: ${ratio >= AIM ? 'met' : 'NOT met'})`);

  const failed = rows.filter((r) => r.non2xx + r.errors + r.mismatches > 0);
  if (failed.length > 0) {
    console.log(`FAILED: bad responses from ${failed.map((r) => r.target).join(', ')}; the figures are not valid`);
    return 1;
  }
  return 0;
}

await runBench(main);
