import { EmbeddedWarehouse } from './views/embedded-warehouse.ts';
const wh = new EmbeddedWarehouse(process.argv[2]!);
const q = async (s: string) => (await wh.query<{ n: string }>(s))[0]?.n;
console.log(JSON.stringify({
  tx: await q('SELECT count() n FROM transactions'),
  uniq: await q('SELECT uniqExact(signature, instruction_index) n FROM transactions'),
  sig: await q('SELECT count() n FROM tx_by_signature'),
  hourly: await q('SELECT sum(tx_count) n FROM protocol_hourly'),
  parts: await q("SELECT groupArray(concat(table, ':', name, ':', toString(rows))) n FROM system.parts WHERE active AND table IN ('transactions','tx_by_signature')"),
}));
await wh.close();
