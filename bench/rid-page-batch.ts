// Random address pages at random places (as rpc-load's randomPage), engine only, K pages at
// once: the service's one bound statement a page, against the split the RESULTS section
// "Time-ordered record id (issue 37)" left untried: each page's ids read alone (bound), and
// the records of every page in flight read together, as one unbound `rid IN (<literals>)` on
// side sessions (as SignatureLookup batches point reads). chDB runs the bound statements of a
// process one after another, whatever their session; unbound ones on side sessions run at once.
//   npx tsx bench/rid-page-batch.ts --dir bench/tmp/rid10m [--seconds 10] [--rounds 3]
import path from 'node:path';
import { POINT_READ_SETTINGS } from '../api/analytics/records/signature-lookup.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { flag, machine, median } from './bench-support.ts';

const dir = path.resolve(flag('dir', 'bench/tmp/rid10m'));
const seconds = Number(flag('seconds', '10'));
const rounds = Number(flag('rounds', '3'));
const wh = new EmbeddedWarehouse(dir);
const KEY = 'address_key = reinterpretAsUInt128(sipHash128({addr:String}))';
const SETTINGS = { max_threads: 1 };
const IN_FLIGHT = 2;

const places = await wh.query<{ a: string; id: string }>(
  `SELECT arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS a, toString(rid) AS id FROM transactions
   WHERE intHash64(rid) % 2000 = 0 ORDER BY cityHash64(a, rid) LIMIT 2000`,
);
const place = () => {
  const p = places[Math.floor(Math.random() * places.length)]!;
  return Math.random() < 0.5 ? { addr: p.a } : { addr: p.a, after: p.id };
};
const ids = (after: boolean) => `SELECT rid FROM tx_by_address_v2 WHERE ${KEY}${after ? ' AND rid > {after:UInt64}' : ''} ORDER BY rid ASC LIMIT 101`;

/** The service's form: one bound statement a page. */
async function onePage(): Promise<number> {
  const p = place();
  const rows = await wh.query(`SELECT toString(rid) AS id, record FROM tx_by_rid WHERE rid IN (${ids('after' in p)}) ORDER BY rid`, {
    params: p,
    settings: SETTINGS,
  });
  return rows.length;
}

/** Records by id, gathered across the pages in flight: one unbound read a batch, on a side session. */
function recordBatcher() {
  const queue: { ids: string[]; resolve: (n: number) => void; reject: (e: unknown) => void }[] = [];
  const idle = Array.from({ length: IN_FLIGHT }, (_, i) => i);
  const pump = (): void => {
    while (idle.length > 0 && queue.length > 0) {
      const batch = queue.splice(0, queue.length);
      const session = idle.pop()!;
      const all = [...new Set(batch.flatMap((w) => w.ids))];
      wh.query<{ id: string }>(`SELECT toString(rid) AS id, record FROM tx_by_rid WHERE rid IN (${all.join(', ')})`, {
        sideSession: session,
        settings: POINT_READ_SETTINGS,
      })
        .then((rows) => {
          const got = new Set(rows.map((r) => r.id));
          for (const w of batch) w.resolve(w.ids.filter((i) => got.has(i)).length);
        })
        .catch((e) => {
          for (const w of batch) w.reject(e);
        })
        .finally(() => {
          idle.push(session);
          pump();
        });
    }
  };
  return (list: string[]): Promise<number> =>
    list.length === 0
      ? Promise.resolve(0)
      : new Promise((resolve, reject) => {
          queue.push({ ids: list, resolve, reject });
          pump();
        });
}
const records = recordBatcher();

/** The split: the page's ids (bound), then its records with every other page's in flight (unbound). */
async function splitPage(): Promise<number> {
  const p = place();
  const got = await wh.query<{ id: string }>(`SELECT toString(rid) AS id FROM (${ids('after' in p)})`, { params: p, settings: SETTINGS });
  return records(got.map((r) => r.id));
}

async function run(page: () => Promise<number>, clients: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let pages = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        await page();
        pages += 1;
      }
    }),
  );
  return pages / seconds;
}

const forms: Record<string, () => Promise<number>> = { 'service: one bound statement': onePage, 'split: ids bound, records batched unbound': splitPage };
const out: Record<string, number[]> = {};
console.log(machine());
for (let r = 0; r < rounds; r++) {
  for (const clients of [1, 20]) {
    for (const [name, page] of Object.entries(forms)) {
      const rate = await run(page, clients);
      (out[`${name}, ${clients} at once`] ??= []).push(rate);
      console.log(`round ${r + 1}: ${name}, ${clients} at once: ${rate.toFixed(1)} pages/s (load ${machine().match(/load avg ([\d.]+)/)?.[1]})`);
    }
  }
}
console.log(
  JSON.stringify(
    { date: new Date().toISOString(), seconds, rounds, medianPagesPerSecond: Object.fromEntries(Object.entries(out).map(([k, v]) => [k, median(v)])) },
    null,
    2,
  ),
);
await wh.close();
