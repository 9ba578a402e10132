// Hot-address history (issue 15): getTransactionsForAddress on the hottest plain address,
// every design measured in one run on one server, so they see the same machine load.
//
//   BENCH_ROWS=10000000 DATA_DIR=bench/tmp/rpc10m npx tsx bench/hot-address.ts
//   BENCH_SECONDS=10 (per load run) BENCH_DESIGNS=today,listing (some designs only)
//
// Designs, each behind POST /bench/address (same framework, hooks and key as /v1/rpc):
//  - today:     003's references from tx_by_address, then their details from the
//               by-signature table by key (the two reads the listing made before 040; the
//               details as the record column, unpacked as signature-lookup.ts does since 090)
//  - coalesced: the same, but the detail reads of concurrent listings go out as one read
//               (as getTransaction's point reads do, signature-lookup.ts)
//  - listing:   the service's page read (060): references, then details through the shared
//               point-read queue of getTransaction (signature-lookup.ts); 040's one-read
//               table is gone (bench/RESULTS.md, "Storage diet")
//  - shared:    listing, and identical concurrent requests share one read: what the service
//               does (analytics.addressTransactions)
// plus JSON-RPC getTransactionsForAddress itself. Scenarios: the first page (limit 100,
// oldest first, what rpc-load.ts sends) and pages starting at random places of the history.
// Each is run with 1 connection (the single-client p50) and with 50 (throughput).
// Every design must answer the very page the service answers before it is timed.
import { execSync } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { addressCursorToken, listAddressTransactions } from '../api/analytics/address-transactions.ts';
import { SignatureLookup } from '../api/analytics/signature-lookup.ts';
import { toTransaction, type TxRow } from '../api/analytics/transactions.ts';
import type { Page, Transaction } from '../api/analytics/types.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { TABLES } from '../warehouse/tables.ts';
import { unpackSignatureRecord } from '../warehouse/signature-records.ts';
import { startBenchServer } from './bench-server.ts';
import { runLoad } from './load-client.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const DESIGNS = (process.env.BENCH_DESIGNS ?? 'today,coalesced,listing,shared,rpc').split(',');
const LIMIT = 100;

/** Where a page starts: after (bt, sk, idx) in ascending order, or the first page. */
type Position = [number, string, number] | null;

interface RefRow {
  sk: string;
  instruction_index: number;
  bt: number;
  program_id: string;
  protocol_name: string;
  success: boolean;
}
type DetailRow = TxRow & { sk: string };

async function readRefs(wh: Warehouse, address: string, visible: string[], at: Position): Promise<RefRow[]> {
  const cursor =
    at === null
      ? ''
      : `AND (block_time, sig_key, instruction_index) > (toDateTime({c_bt:UInt32}, 'UTC'), {c_sk:UInt64}, {c_idx:UInt16})
    AND block_time >= toDateTime({c_bt:UInt32}, 'UTC')`;
  return wh.query<RefRow>(
    `SELECT toString(sig_key) AS sk, instruction_index, toUInt32(block_time) AS bt, program_id, protocol_name, success
     FROM ${TABLES.txByAddress} WHERE address_key = cityHash64({addr:String}) AND address = {addr:String} AND protocol_name IN {visible:Array(String)} ${cursor}
     ORDER BY block_time, sig_key, instruction_index LIMIT {lim:UInt32}`,
    { params: { addr: address, visible, lim: LIMIT + 1, ...(at ? { c_bt: at[0], c_sk: at[1], c_idx: at[2] } : {}) } },
  );
}

const readDetails = async (wh: Warehouse, keys: string[]): Promise<DetailRow[]> =>
  (
    await wh.query<{ record: string; sk: string }>(
      `SELECT record, toString(sig_key) AS sk FROM ${TABLES.txBySignature}
   WHERE sig_key IN (SELECT arrayJoin(arrayMap(k -> toUInt64(k), {keys:Array(String)})))`,
      { params: { keys } },
    )
  ).map(({ record, sk }) => ({ ...unpackSignatureRecord(record), sk }));

/** References matched with their details as the pre-040 listing did (no filters, no collisions here); records carry their instruction index, as the service's do. */
function assemble(refs: RefRow[], details: DetailRow[]): Transaction[] {
  const byRef = new Map(details.map((d) => [`${d.sk}#${Number(d.instruction_index)}`, d]));
  return refs
    .slice(0, LIMIT)
    .map((r) => ({ ...toTransaction(byRef.get(`${r.sk}#${Number(r.instruction_index)}`)!), instructionIndex: Number(r.instruction_index) }));
}

/** Detail reads of concurrent listings batched: one read while another is in flight. */
class DetailBatcher {
  private queue: { keys: string[]; resolve: (rows: DetailRow[]) => void; reject: (e: unknown) => void }[] = [];
  private busy = false;
  batches = 0;
  listings = 0;
  constructor(private readonly wh: Warehouse) {}
  read(keys: string[]): Promise<DetailRow[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ keys, resolve, reject });
      this.pump();
    });
  }
  private pump(): void {
    if (this.busy || this.queue.length === 0) return;
    const batch = this.queue.splice(0);
    this.busy = true;
    this.batches += 1;
    this.listings += batch.length;
    readDetails(this.wh, [...new Set(batch.flatMap((b) => b.keys))])
      .then(
        (rows) => {
          const bySk = new Map<string, DetailRow[]>();
          for (const r of rows) bySk.set(r.sk, [...(bySk.get(r.sk) ?? []), r]);
          for (const b of batch) b.resolve(b.keys.flatMap((k) => bySk.get(k) ?? []));
        },
        (e: unknown) => {
          for (const b of batch) b.reject(e);
        },
      )
      .finally(() => {
        this.busy = false;
        this.pump();
      });
  }
}

const load = (): string =>
  execSync('uptime')
    .toString()
    .trim()
    .replace(/.*load average: /, '');

async function main(): Promise<void> {
  let batcher!: DetailBatcher;
  let lookup!: SignatureLookup;
  let hot = '';
  const routes = (app: FastifyInstance): void => {
    app.post('/bench/address', async (req) => {
      const b = req.body as { design: string; at: Position };
      const { services } = server;
      const visible = await services.operatorAnalytics.protocols();
      const request = {
        address: hot,
        filters: {},
        sortOrder: 'asc' as const,
        limit: LIMIT,
        cursor: b.at ? addressCursorToken(services.pageTokens, { address: hot, filters: {}, sortOrder: 'asc', limit: LIMIT }, ...b.at) : undefined,
      };
      let data: Transaction[];
      if (b.design === 'today' || b.design === 'coalesced') {
        const refs = await readRefs(services.wh, hot, visible, b.at);
        const keys = [...new Set(refs.map((r) => r.sk))];
        data = assemble(refs, b.design === 'today' ? await readDetails(services.wh, keys) : await batcher.read(keys));
      } else if (b.design === 'listing') {
        data = (await listAddressTransactions(services.wh, services.pageTokens, (k) => lookup.byKeys(services.wh, k), request, visible)).data;
      } else {
        data = (await services.operatorAnalytics.addressTransactions(request)).data;
      }
      return { jsonrpc: '2.0', id: 1, result: { data } };
    });
  };
  const server = await startBenchServer(ROWS, routes);
  const { services, app, headers } = server;
  batcher = new DetailBatcher(services.wh);
  lookup = new SignatureLookup();
  const connectionHeaders = await server.connectionHeaders(50);
  try {
    const [h] = await services.wh.query<{ a: string; c: string }>(
      `SELECT address AS a, count() AS c FROM ${TABLES.txByAddress}
       WHERE address NOT IN (SELECT program_id FROM ${TABLES.protocols}) GROUP BY a ORDER BY c DESC LIMIT 1`,
    );
    hot = h!.a;
    process.stdout.write(`hottest plain address ${hot}: ${h!.c} references\n`);
    // 200 random places in the history (each a page start), the same for every design.
    const places = (
      await services.wh.query<{ bt: number; sk: string; ii: number }>(
        `SELECT toUInt32(block_time) AS bt, toString(sig_key) AS sk, instruction_index AS ii FROM ${TABLES.txByAddress}
       WHERE address_key = cityHash64({a:String}) AND address = {a:String} ORDER BY cityHash64(sig_key, 'bench') LIMIT 200`,
        { params: { a: hot } },
      )
    ).map((r): Position => [Number(r.bt), r.sk, Number(r.ii)]);

    // Same answers: every design gives the service's page, at the start and at 5 places.
    const page = async (design: string, at: Position) =>
      (await app.inject({ method: 'POST', url: '/bench/address', headers, payload: { design, at } })).json<{ result: Page<Transaction> }>().result.data;
    for (const at of [null, ...places.slice(0, 5)]) {
      const want = JSON.stringify(await page('shared', at));
      for (const d of ['today', 'coalesced', 'listing']) {
        if (JSON.stringify(await page(d, at)) !== want) throw new Error(`design ${d} answers another page at ${JSON.stringify(at)}`);
      }
    }
    const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransactionsForAddress', params: [hot, { limit: LIMIT }] });
    const rpcFirst = (
      await app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'content-type': 'application/json', ...headers }, payload: rpcBody })
    ).json<{ result: Page<Transaction> }>();
    if (JSON.stringify(rpcFirst.result.data) !== JSON.stringify(await page('shared', null))) throw new Error('JSON-RPC answers another first page');

    const rows: Record<string, string | number>[] = [];
    for (const scenario of ['first page', 'random pages'] as const) {
      for (const design of DESIGNS) {
        if (design === 'rpc' && scenario !== 'first page') continue;
        const isRpc = design === 'rpc';
        const bodies = scenario === 'first page' ? [] : places.map((at) => JSON.stringify({ design, at }));
        for (const connections of [1, 50]) {
          batcher.batches = 0;
          batcher.listings = 0;
          const { result, matched } = await runLoad({
            url: `${server.baseUrl}${isRpc ? '/v1/rpc' : '/bench/address'}`,
            connections,
            seconds: SECONDS,
            headers: { 'content-type': 'application/json', ...headers },
            ...(isRpc ? { body: rpcBody } : scenario === 'first page' ? { body: JSON.stringify({ design, at: null }) } : { bodies }),
            countBodiesContaining: '"error"',
            connectionHeaders,
          });
          rows.push({
            scenario,
            design,
            connections,
            'req/s': Math.round(result.requests.average),
            p50: result.latency.p50,
            p99: result.latency.p99,
            errors: result.errors + result.non2xx + matched,
            ...(design === 'coalesced' && batcher.batches > 0 ? { 'listings per detail read': Number((batcher.listings / batcher.batches).toFixed(1)) } : {}),
            load: load(),
          });
          process.stdout.write(`${JSON.stringify(rows.at(-1))}\n`);
        }
      }
    }
    console.table(rows);
  } finally {
    await server.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
