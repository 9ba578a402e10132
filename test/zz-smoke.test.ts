import { afterAll, beforeAll, it } from 'vitest';
import { startAppWithData } from './support/services.ts';
let t: any, headers: any;
beforeAll(async () => { ({ t, headers } = await startAppWithData(2000)); });
afterAll(async () => t.cleanup());
const q = async (query: string, variables?: unknown, extra: Record<string,string> = {}) => {
  const r = await t.app.inject({ method: 'POST', url: '/graphql', headers: { ...headers, 'content-type': 'application/json', ...extra }, payload: { query, variables } });
  console.log(r.statusCode, JSON.stringify(r.headers['x-ratelimit-remaining']), r.body.slice(0, 1500));
};
it('smoke', async () => {
  await q('{ protocols protocolStats(filters:{protocols:["jupiter_v6"]}) { protocolName totalTransactions uniquePrograms averageFee } }');
  await q('{ transactions(pagination:{first:2}) { edges { node { signature slot fee protocolName } cursor } pageInfo { hasNextPage endCursor } } }');
  await q('{ transactions(groupBy:[PROTOCOL], metrics:[COUNT,P95_FEE]) { edges { node { protocol count p95Fee avgFee } cursor } pageInfo { hasNextPage } } }');
  await q('{ timeSeries(filters:{dateRange:{start:"2024-12-29",end:"2024-12-31"}, protocols:["pump_fun"]}, bucketBy: DAY, metrics:[COUNT, SUM_FEE], groupBy:[PROTOCOL]) { timestamp value label } }');
  await q('{ failedTransactions(pagination:{first:3}) { edges { node { protocolName instructionType errorMessage count } } pageInfo { hasNextPage } } }');
  await q('{ queryComplexity(groupBy:[HOUR], metrics:[P99_FEE]) { score estimatedRows baseCost withinBudget recommendations } }');
  await q('{ a: transactions(filters:{protocols:[]}) { pageInfo { hasNextPage } } b: transactions(pagination:{first:5000}) { pageInfo { hasNextPage } } }', undefined, { accept: 'application/graphql-response+json' });
  await q('{ transactions(filters:{dateRange:{start:"2025-02-30"}}) { pageInfo { hasNextPage } } }');
  await q('{ transactions(groupBy:[NOPE]) { pageInfo { hasNextPage } } }');
  await q('{ transactions(filters:{protocols:["nope"]}) { pageInfo { hasNextPage } } }');
  const r = await t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
  console.log(r.statusCode, r.headers['content-security-policy'], r.body.slice(0, 100));
  const r2 = await t.app.inject({ method: 'GET', url: '/graphql?query={protocols}' });
  console.log(r2.statusCode, r2.body);
  const r3 = await t.app.inject({ method: 'GET', url: '/graphql?query=mutation{__typename}', headers });
  console.log(r3.statusCode, r3.headers.allow, r3.body);
});
