// A process that works on one store for test/daemons/migration-110.test.ts (chDB opens one data
// directory per process, so each store is its own child):
//   seed DIR     migrations before 110, then records in several parts (as a store before 110 has them)
//   migrate DIR  all migrations, printing "start <statement's first words>" before each (the test kills it there)
//   dump DIR     all migrations, then every record's id and every row of 110's tables, as JSON
import { insertDemoRows } from '../../ingest/demo-generator.ts';
import { EmbeddedWarehouse } from '../../warehouse/embedded-warehouse.ts';
import { loadMigrations, migrate } from '../../warehouse/migrate.ts';

const [mode, dir] = process.argv.slice(2) as [string, string];
const wh = new EmbeddedWarehouse(dir);
const START = 1_735_689_600;

async function main(): Promise<void> {
  if (mode === 'seed') {
    await migrate(
      wh,
      () => {},
      loadMigrations().filter((m) => m.version < 110),
    );
    for (let i = 0; i < 4; i++)
      await insertDemoRows(wh, { seed: 23, total: 40_000, offset: i * 10_000, count: 10_000, startTime: START, endTime: START + 3 * 86_400 });
    // Records the id cannot hold (tests wrote such slots and instruction indexes).
    await wh.exec(`INSERT INTO transactions (signature, instruction_index, slot, block_time, program_id, protocol_name, instruction_type, fee, compute_units, accounts_count, success, accounts)
      SELECT concat('odd', toString(number % 3)), 9000 + number, 18446744073709551615 - number % 2, toDateTime(${START}, 'UTC'), 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', 'jupiter_v6', 'route', 1, 1, 1, 1, ['odd-account']
      FROM numbers(5)`);
  } else if (mode === 'migrate') {
    const exec = wh.exec.bind(wh);
    wh.exec = async (sql, options) => {
      process.stdout.write(
        `start ${sql
          .replace(/^(\s|--.*\n)*/, '')
          .slice(0, 40)
          .replace(/\s+/g, ' ')}\n`,
      );
      return exec(sql, options);
    };
    await migrate(wh);
    process.stdout.write('migrated\n');
  } else {
    const applied = (await migrate(wh)).applied;
    const one = async (sql: string) => (await wh.query<{ v: string }>(sql))[0]!.v;
    const dump = {
      applied,
      // Every record's (signature, instruction_index, rid), as an order-free digest.
      ids: await one('SELECT toString(sum(cityHash64(signature, instruction_index, rid))) AS v FROM transactions'),
      unique: await one('SELECT toString((count(), uniqExact(rid), countIf(rid = 0))) AS v FROM transactions'),
      records: await one('SELECT toString((count(), sum(cityHash64(rid, record)))) AS v FROM tx_by_rid'),
      index: await one('SELECT toString((count(), sum(cityHash64(sig_key, instruction_index, rid)))) AS v FROM tx_rid_by_sig'),
      // Each record's index entry names its own signature, instruction and id.
      indexed: await one(
        'SELECT toString(count()) AS v FROM tx_rid_by_sig AS i INNER JOIN transactions AS t ON i.rid = t.rid AND i.sig_key = cityHash64(t.signature) AND i.instruction_index = t.instruction_index',
      ),
      addresses: await one(
        'SELECT toString((count(), uniqExact(address_key, rid), sum(cityHash64(address_key, rid, block_time, program_id, protocol_name, success)))) AS v FROM tx_by_address_v2',
      ),
      expectedAddresses: await one('SELECT toString(sum(length(arrayDistinct(arrayPushBack(accounts, toString(program_id)))))) AS v FROM transactions'),
      leftovers: await one(
        "SELECT toString(groupArray(name)) AS v FROM system.tables WHERE database = currentDatabase() AND name IN ('rid_assign_110', 'tx_by_address', 'tx_by_address_mv', 'tx_by_signature_v3', 'tx_by_signature_v3_mv')",
      ),
    };
    process.stdout.write(`${JSON.stringify(dump)}\n`);
  }
  await wh.close();
}

await main();
