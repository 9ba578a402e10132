// Random address pages with several in flight (issue 37): chDB runs every bound statement of
// the process one after another, whatever its session (the Node binding's process-wide chain
// of parameterised queries, bench/RESULTS.md "chDB sessions"), so the service's pages, all
// bound, never run two at once. The same page statement with its values written as literals
// (the address's key and the visible protocols' hashes as numbers, as the point reads do) is
// not chained. Engine only, three sessions (SERVING_SESSIONS), pages a second with 1 and with
// --inflight pages in flight, bound against unbound, alternating, --rounds times.
//   npx tsx bench/rid-page-concurrency.ts --dir bench/tmp/rid10m [--rounds 3] [--seconds 5] [--inflight 6]
import path from 'node:path';
import { Session } from 'chdb';
import { flag, machine } from './bench-support.ts';

const dir = path.resolve(flag('dir', 'bench/tmp/rid10m'));
const rounds = Number(flag('rounds', '3'));
const seconds = Number(flag('seconds', '5'));
const inflight = Number(flag('inflight', '6'));
const sessions = [new Session(dir), new Session(dir), new Session(dir)];
const busy = sessions.map(() => 0);
const places = JSON.parse(
  (
    await sessions[0]!.queryAsync(
      `SELECT arrayJoin(arrayDistinct(arrayPushBack(accounts, toString(program_id)))) AS a, toString(rid) AS id,
         toString(reinterpretAsUInt128(sipHash128(a))) AS k
       FROM transactions WHERE intHash64(rid) % 2000 = 0 ORDER BY cityHash64(a, rid) LIMIT 2000 FORMAT JSON`,
    )
  ).text(),
).data as { a: string; id: string; k: string }[];
const visible = JSON.parse((await sessions[0]!.queryAsync('SELECT protocol_name AS p FROM protocols FINAL WHERE active FORMAT JSON')).text()).data.map(
  (r: { p: string }) => r.p,
) as string[];

async function page(i: number, bound: boolean): Promise<void> {
  const p = places[i % places.length]!;
  const after = i % 2 === 0;
  const s = busy.indexOf(Math.min(...busy));
  busy[s]! += 1;
  try {
    if (bound) {
      const ids = `SELECT rid FROM tx_by_address_v2 WHERE address_key = reinterpretAsUInt128(sipHash128({addr:String}))
        AND protocol_name IN {protocols:Array(String)}${after ? ' AND rid > {after:UInt64}' : ''} ORDER BY rid LIMIT 101`;
      await sessions[s]!.queryBindAsync(
        `SELECT toString(rid) AS id, record FROM tx_by_rid WHERE rid IN (${ids}) ORDER BY rid SETTINGS max_threads = 1`,
        { addr: p.a, protocols: visible, ...(after ? { after: p.id } : {}) },
        { format: 'JSONEachRowWithProgress' },
      );
    } else {
      // A UInt128 key as a bare number literal would be read as a Float64 (and miss the index): toUInt128 of its digits.
      const hashes = visible.map((x) => `cityHash64('${x}')`).join(', ');
      const ids = `SELECT rid FROM tx_by_address_v2 WHERE address_key = toUInt128('${p.k}')
        AND cityHash64(protocol_name) IN (${hashes})${after ? ` AND rid > ${p.id}` : ''} ORDER BY rid LIMIT 101`;
      await sessions[s]!.queryAsync(`SELECT toString(rid) AS id, record FROM tx_by_rid WHERE rid IN (${ids}) ORDER BY rid SETTINGS max_threads = 1`, {
        format: 'JSONEachRowWithProgress',
      });
    }
  } finally {
    busy[s]! -= 1;
  }
}

async function rate(bound: boolean, n: number): Promise<number> {
  let done = 0;
  let next = Math.floor(Math.random() * places.length);
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (performance.now() < end) {
        await page((next += 1) * 7919, bound);
        done += 1;
      }
    }),
  );
  return done / seconds;
}

console.log(machine());
for (let r = 0; r < rounds; r++)
  for (const n of [1, inflight])
    for (const bound of r % 2 === 0 ? [true, false] : [false, true])
      console.log(`round ${r + 1}: ${bound ? 'bound  ' : 'unbound'}, ${n} in flight: ${(await rate(bound, n)).toFixed(1)} pages/s`);
for (const s of sessions) s.close();
