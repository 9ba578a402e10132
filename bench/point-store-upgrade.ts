// Upgrade a seeded store to the current schema and time it, then optionally merge the
// by-signature table into one compact part now rather than after the quiet hour the merge
// policy waits for (what a bench right after an upgrade needs), and print the part state and
// bytes per record of the by-signature tables before and after. Written for migration 080 on
// stores seeded before it (issue 25; bench/RESULTS.md, "Chosen: migration 080"); on a store
// seeded before 090 it now times 090, which copies tx_by_signature_v2's records into
// tx_by_signature_v3 and drops v2. The 080 upgrade itself cannot be rerun on a current store
// (080 and 090 are applied together to an older one, and timed together).
//
//   npx tsx bench/point-store-upgrade.ts --dir /path/to/store [--optimize]
//
// A store already at the current schema has nothing to upgrade: the script says so and stops
// (exit code 1), unless --optimize is given, which then only merges.
import { existsSync } from 'node:fs';
import { EmbeddedWarehouse } from '../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../warehouse/migrate.ts';
import { flag, machine, timeMs, V3_TABLE } from './bench-support.ts';

const dir = flag('dir', '');
if (dir === '') throw new Error('--dir of a seeded store is required');
const optimize = process.argv.includes('--optimize');
/** The by-signature table before migration 090, and the current one. */
const BY_SIGNATURE = ['tx_by_signature_v2', V3_TABLE];

if (!existsSync(dir)) {
  console.error(`${dir} does not exist: give the data directory of a seeded store`);
  process.exitCode = 1;
} else {
  const wh = new EmbeddedWarehouse(dir);
  const state = () =>
    wh.query(
      `SELECT table, part_type, count() AS parts, sum(rows) AS n, round(sum(bytes_on_disk) / n, 1) AS bytes_per_row
    FROM system.parts WHERE active AND database = currentDatabase() AND table IN {t:Array(String)} GROUP BY table, part_type ORDER BY table, part_type`,
      { params: { t: BY_SIGNATURE } },
    );
  try {
    console.log(machine());
    const [hasLog] = await wh.query<{ n: string }>("SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations'");
    const applied =
      Number(hasLog!.n) === 0 ? [] : (await wh.query<{ v: number }>('SELECT DISTINCT version AS v FROM schema_migrations')).map((r) => Number(r.v));
    const pending = loadMigrations()
      .filter((m) => !applied.includes(m.version))
      .map((m) => m.name);
    if (applied.length === 0) {
      console.error(`${dir} holds no migrated store (no schema_migrations): seed one first (bench/seed-and-stats.ts --keep)`);
      process.exitCode = 1;
    } else if (pending.length === 0 && !optimize) {
      console.error(
        `${dir} is at the current schema (migration ${Math.max(...applied)}): nothing to upgrade. The upgrades this times (080, 090) run only on stores seeded before them; --optimize merges ${V3_TABLE} alone.`,
      );
      process.exitCode = 1;
    } else {
      console.table(await state());
      if (pending.length > 0) {
        console.log(`pending: ${pending.join(', ')}`);
        let done: string[] = [];
        const ms = await timeMs(async () => {
          done = (await migrate(wh)).applied;
        });
        console.log(`migrations applied: ${done.join(', ') || 'none'} in ${(ms / 1000).toFixed(2)} s`);
      }
      if (optimize) {
        const opt = await timeMs(() => wh.exec(`OPTIMIZE TABLE ${V3_TABLE} FINAL`));
        console.log(`OPTIMIZE TABLE ${V3_TABLE} FINAL: ${(opt / 1000).toFixed(1)} s`);
      }
      console.table(await state());
    }
  } finally {
    await wh.close();
  }
}
