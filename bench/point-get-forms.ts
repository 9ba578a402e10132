// The point read's statement in several forms, on one seeded store, without HTTP: what one
// batch of getTransaction keys costs the engine in each, in wall time and in this process's
// CPU (engine threads included), interleaved so the shared machine's load falls on all alike.
//
//   npx tsx bench/point-get-forms.ts --dir /path/to/store [--rounds 20] [--sizes 1,25,50]
//
// Forms: `sql-hash` (one bound String per signature, hashed by cityHash64 in SQL), `array`
// (keys hashed in JS, one bound Array(UInt64)), `keys` (one bound UInt64 per key), `literal`
// (keys hashed in JS, written into the text as decimal numbers: no bound parameter, so chDB's
// process-wide chain of bound queries is not joined; the service's form, signature-lookup.ts),
// and `literal x2` / `keys x2` (two sessions over the same data directory, two batches at
// once). Every form reads what the service reads since migration 090 (the record column of
// tx_by_signature_v3 and the key) with the service's settings; only the keys' form differs.
// Needs a store at migration 090.
import { cityHasher } from '../ingest/city-hash.ts';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { TABLES } from '../warehouse/tables.ts';
import { flag, machine, median, POINT_READ_SETTINGS, requireCurrentSchema, V3_TABLE } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const ROUNDS = Number(flag('rounds', '20'));
const SIZES = flag('sizes', '1,25,50').split(',').map(Number);
const wh = new EmbeddedWarehouse(dir);
const wh2 = new EmbeddedWarehouse(dir);
const h = cityHasher();
const key = (s: string): string => {
  h.hash(s);
  return ((BigInt(h.high()) << 32n) | BigInt(h.low())).toString();
};
const SETTINGS = POINT_READ_SETTINGS;
const SELECT = `SELECT record, toString(sig_key) AS sk FROM ${V3_TABLE}`;

type Form = (w: EmbeddedWarehouse, sigs: string[]) => Promise<unknown[]>;
const FORMS: Record<string, Form> = {
  'sql-hash': (w, sigs) => {
    const params: Record<string, string> = {};
    const set = sigs.map((s, i) => {
      params[`s${i}`] = s;
      return `cityHash64({s${i}:String})`;
    });
    return w.query(`${SELECT} WHERE sig_key IN (${set.join(', ')})`, { params, settings: SETTINGS });
  },
  array: (w, sigs) => w.query(`${SELECT} WHERE sig_key IN {k:Array(UInt64)}`, { params: { k: `[${sigs.map(key).join(',')}]` }, settings: SETTINGS }),
  keys: (w, sigs) => {
    const params: Record<string, string> = {};
    const set = sigs.map((s, i) => {
      params[`k${i}`] = key(s);
      return `{k${i}:UInt64}`;
    });
    return w.query(`${SELECT} WHERE sig_key IN (${set.join(', ')})`, { params, settings: SETTINGS });
  },
  literal: (w, sigs) => w.query(`${SELECT} WHERE sig_key IN (${sigs.map(key).join(', ')})`, { settings: SETTINGS }),
};

try {
  console.log(machine());
  await requireCurrentSchema(wh, dir);
  const sigs = (await wh.query<{ s: string }>(`SELECT signature AS s FROM ${TABLES.transactions} ORDER BY cityHash64(signature, 'forms') LIMIT 200000`)).map(
    (r) => r.s,
  );
  let next = 0;
  const take = (n: number): string[] => {
    const out = sigs.slice(next, next + n);
    next = (next + n) % (sigs.length - n);
    return out;
  };
  // Same answers from every form.
  const probe = take(20);
  const ref = JSON.stringify((await FORMS['sql-hash']!(wh, probe)).map((r) => JSON.stringify(r)).sort());
  for (const [name, f] of Object.entries(FORMS)) {
    const got = JSON.stringify((await f(wh, probe)).map((r) => JSON.stringify(r)).sort());
    if (got !== ref) throw new Error(`${name} answers differently`);
  }
  const names = [...Object.keys(FORMS), 'literal x2', 'keys x2'];
  for (const size of SIZES) {
    const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of names) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        if (name.endsWith(' x2')) {
          // Two batches of `size` at once, one per session: per key over both.
          const f = FORMS[name.slice(0, -3)]!;
          await Promise.all([f(wh, take(size)), f(wh2, take(size))]);
        } else {
          await FORMS[name]!(wh, take(size));
        }
        const keys = name.endsWith(' x2') ? 2 * size : size;
        wall[name]!.push((performance.now() - t0) / keys);
        const c = process.cpuUsage(c0);
        cpu[name]!.push((c.user + c.system) / 1000 / keys);
      }
    }
    const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
    for (const name of names) {
      console.log(
        `batch ${String(size).padStart(3)}  ${name.padEnd(11)} wall ${median(wall[name]!).toFixed(3)} ms/key  cpu ${median(cpu[name]!).toFixed(3)} ms/key  (load ${load})`,
      );
    }
  }
} finally {
  await wh2.close();
  await wh.close();
}
