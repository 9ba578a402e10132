// `npm run fuzz -- [--seconds 300] [--seed N | --random]`: fuzz every interface of a freshly
// started service (its own data directory, demo data, real keys) from its contract, for a time
// budget split between them, and print what was tried and every failure with the request to
// replay it. The seed is the suite's (FUZZ_SEED) unless --seed names one or --random draws one;
// it is printed first, and the same seed replays the same calls. This is the longer run, and
// the one place a random seed belongs: the suite's runs (test/daemons/fuzz.test.ts) are fixed. A
// failure found here becomes a fixed case (docs/reliability.md). Exit code 1 when anything failed.
import { fuzzRpc, rpcSamples } from './rpc-fuzzer.ts';
import { FUZZ_SEED, FUZZ_SERVICE_ENV, GRAPHQL_EXCLUDED_CHECKS, runSchemathesis } from './schemathesis.ts';
import { startApiService } from '../daemons/api-service.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const seconds = Number(arg('seconds', '300'));
const random = process.argv.includes('--random');
const seed = random ? Math.floor(Math.random() * 2 ** 31) : Number(arg('seed', String(FUZZ_SEED)));
if (!Number.isFinite(seconds) || seconds < 10 || !Number.isInteger(seed) || (random && process.argv.includes('--seed'))) {
  console.error('usage: npm run fuzz -- [--seconds N (>= 10)] [--seed INTEGER | --random]');
  process.exit(2);
}
console.log(`fuzz: seed ${seed}${random ? ' (random)' : ''}, ${seconds} s budget (replay: npm run fuzz -- --seconds ${seconds} --seed ${seed})`);

const service = await startApiService({ demoRows: 50_000, env: { ...FUZZ_SERVICE_ENV } });
let failed = 0;
try {
  // Several enterprise keys used in turn: 2000 requests a minute each.
  const keys = await Promise.all([1, 2, 3, 4].map((i) => service.createKey('enterprise', `fuzz-${i}`).then((k) => k.key)));
  const share = Math.floor(seconds / 3);

  const rest = await runSchemathesis({
    location: `${service.url}/api/v1/openapi.json`,
    headers: { 'x-api-key': keys[0]! },
    seconds: share,
    seed,
    ratePerMinute: 1800,
  });
  console.log(`REST (schemathesis): ${rest.generated} cases, ${rest.failed} failed, exit ${rest.exitCode}`);
  if (rest.exitCode !== 0) {
    failed++;
    console.log(rest.output.slice(-8000));
  }

  const graphqlUp =
    (
      await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': keys[1]! },
        body: '{"query":"{__typename}"}',
      })
    ).status === 200;
  if (graphqlUp) {
    const gql = await runSchemathesis({
      location: `${service.url}/graphql`,
      excludeChecks: GRAPHQL_EXCLUDED_CHECKS,
      headers: { 'x-api-key': keys[1]! },
      seconds: share,
      seed,
      ratePerMinute: 1800,
    });
    console.log(`GraphQL (schemathesis): ${gql.generated} cases, ${gql.failed} failed, exit ${gql.exitCode}`);
    if (gql.exitCode !== 0) {
      failed++;
      console.log(gql.output.slice(-8000));
    }
  } else {
    console.log('GraphQL: not served by this build; skipped');
  }

  const rpc = await fuzzRpc({
    url: service.url,
    keys: keys.slice(2),
    seed,
    maxRequests: Number.MAX_SAFE_INTEGER,
    maxMs: share * 1000,
    samples: await rpcSamples(service.url, keys[2]!),
  });
  console.log(
    `JSON-RPC: ${rpc.requests} requests, ${rpc.calls} answers (${JSON.stringify(rpc.byMode)}), outcomes ${JSON.stringify(rpc.outcomes)}, ${rpc.failures.length} failures`,
  );
  for (const f of rpc.failures.slice(0, 20))
    console.log(`  [${f.check}] ${f.detail}\n    request: ${f.request.slice(0, 500)}\n    response (${f.status}): ${f.response.slice(0, 500)}`);
  if (rpc.failures.length > 0) failed++;
} finally {
  await service.stop();
}
console.log(failed === 0 ? `fuzz: no failures (seed ${seed})` : `fuzz: ${failed} interface(s) with failures (seed ${seed})`);
process.exit(failed === 0 ? 0 : 1);
