// Upgrade a seeded store to the current schema and time it (migration 080 on a store seeded
// before it: issue 25), then optionally merge tx_by_signature_v2 into one compact part now
// rather than after the quiet hour the merge policy waits for (what a bench right after an
// upgrade needs), and print the part state and bytes per record of the table.
//
//   npx tsx bench/point-store-upgrade.ts --dir /path/to/store [--optimize]
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { migrate } from '../warehouse/migrate.ts';
import { TABLES } from '../warehouse/tables.ts';
import { flag, machine, timeMs } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const wh = new EmbeddedWarehouse(dir);
const state = () => wh.query(`SELECT part_type, count() AS parts, sum(rows) AS n, round(sum(bytes_on_disk) / n, 1) AS bytes_per_row
  FROM system.parts WHERE active AND database = currentDatabase() AND table = {t:String} GROUP BY part_type`, { params: { t: TABLES.txBySignature } });
try {
  console.log(machine());
  console.table(await state());
  let applied: string[] = [];
  const ms = await timeMs(async () => { applied = (await migrate(wh)).applied; });
  console.log(`migrations applied: ${applied.join(', ') || 'none'} in ${(ms / 1000).toFixed(2)} s`);
  if (process.argv.includes('--optimize')) {
    const opt = await timeMs(() => wh.exec(`OPTIMIZE TABLE ${TABLES.txBySignature} FINAL`));
    console.log(`OPTIMIZE TABLE ${TABLES.txBySignature} FINAL: ${(opt / 1000).toFixed(1)} s`);
  }
  console.table(await state());
} finally {
  await wh.close();
}
