/**
 * HTTP throughput: `{ me }` on the gateway with rate limits off and on, beside a bare graphql-yoga `{ __typename }`
 * (`npm run bench:http`). How it measures: docs/benchmarks.md.
 */
import {
  HOST,
  alternate,
  badCount,
  freePort,
  graphql,
  httpOk,
  median,
  positiveInt,
  progress,
  runBench,
  signUpBenchUser,
  spawnGateway,
  start,
  startRedis,
  waitFor,
  type LoadSample,
  type LoadTarget,
} from './support/processes.js';

const SECONDS = positiveInt('BENCH_SECONDS', 5);
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
const WARMUP_SECONDS = 1;
const CONNECTIONS = 50;
const AIM = 0.7;
/** `{ me }` with limits on against limits off. */
const LIMITS_AIM = 0.95;

async function main(): Promise<number> {
  const redisServer = await startRedis();
  const [offPort, onPort, barePort] = [await freePort(), await freePort(), await freePort()];
  const env = { NODE_ENV: 'production', HOST };

  progress(`starting gateways on ${offPort} (limits off) and ${onPort} (limits on), bare yoga on ${barePort}`);
  const gateway = (port: number, limits: Record<string, string>) =>
    spawnGateway(`gateway :${port}`, {
      ...env,
      PORT: String(port),
      REDIS_URL: redisServer.url,
      KEY_PREFIX: `bench${port}:`,
      LOG_LEVEL: 'silent',
      ...limits,
    });
  gateway(offPort, {});
  gateway(onPort, { RATE_LIMIT_PER_MINUTE: '1000000000' });
  start('bare yoga', process.execPath, ['--import', 'tsx', 'bench/support/bare-yoga.ts'], {
    ...env,
    PORT: String(barePort),
  });
  const bareUrl = `http://${HOST}:${barePort}`;
  await waitFor('bare yoga /health', () => httpOk(`${bareUrl}/health`));

  const meQuery = '{ me { id } }';
  const meTarget = async (name: string, port: number): Promise<LoadTarget> => {
    const url = `http://${HOST}:${port}`;
    await waitFor(`${name} /readyz`, () => httpOk(`${url}/readyz`));
    const { username, auth } = await signUpBenchUser(url);
    const me = await graphql(`${url}/graphql`, meQuery, auth);
    const meId = (me.data.me as { id?: string } | null)?.id;
    if (meId !== username)
      throw new Error(`sanity check failed: { me { id } } gave ${me.text}, expected id "${username}"`);
    return {
      name,
      url: `${url}/graphql`,
      headers: auth,
      body: JSON.stringify({ query: meQuery }),
      expectBody: me.text,
    };
  };
  const bare = await graphql(`${bareUrl}/graphql`, '{ __typename }');
  const targets: LoadTarget[] = [
    await meTarget('gateway { me { id } }, limits off', offPort),
    await meTarget('gateway { me { id } }, limits on', onPort),
    {
      name: 'bare yoga { __typename }',
      url: `${bareUrl}/graphql`,
      headers: {},
      body: JSON.stringify({ query: '{ __typename }' }),
      expectBody: bare.text,
    },
  ];

  const { samples } = await alternate(targets, {
    rounds: ROUNDS,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
  });

  // Report.
  const rows = targets.map((t, i) => {
    const ss = samples[i]!;
    const sum = (k: keyof LoadSample['bad']) => ss.reduce((acc, s) => acc + s.bad[k], 0);
    return {
      target: t.name,
      ...Object.fromEntries(ss.map((s, r) => [`round ${r + 1}`, Math.round(s.rps)])),
      'median req/s': Math.round(median(ss.map((s) => s.rps))),
      'p50 ms': median(ss.map((s) => s.p50)),
      'p99 ms': median(ss.map((s) => s.p99)),
      non2xx: sum('non2xx'),
      'errors (incl. timeouts)': sum('errors'),
      mismatches: sum('mismatches'),
      bad: ss.reduce((acc, s) => acc + badCount(s), 0),
    };
  });
  const [off, on, base] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
  const ratio = off['median req/s'] / base['median req/s'];
  const limitsRatio = on['median req/s'] / off['median req/s'];
  console.log(`\n${ROUNDS} rounds x ${SECONDS}s, ${CONNECTIONS} connections, pipelining 1, targets alternating ABCCBA`);
  console.table(rows);
  console.log(
    `ratio median(gateway, limits off)/median(baseline) = ${ratio.toFixed(3)}  (aim >= ${AIM}: ${ratio >= AIM ? 'met' : 'NOT met'})`,
  );
  console.log(
    `ratio median(limits on)/median(limits off) = ${limitsRatio.toFixed(3)}  (aim >= ${LIMITS_AIM}: ${limitsRatio >= LIMITS_AIM ? 'met' : 'NOT met'})`,
  );

  const failed = rows.filter((r) => r.bad > 0);
  if (failed.length > 0) {
    console.log(`FAILED: bad responses from ${failed.map((r) => r.target).join(', ')}; the figures are not valid`);
    return 1;
  }
  return 0;
}

await runBench(main);
