// The MCP door's resources: what an agent reads before it asks. The transactions table's
// columns (name and type from the engine, with SPEC's words for the columns SPEC names) and
// the protocol list (the same as the list_protocols tool).
import { TABLES } from '../../../warehouse/tables.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { protocolList, type ToolCaller, type ToolDeps } from './mcp-tools.ts';

/** SPEC's notes on the columns of the `transactions` table ("SQL table transactions"). */
const SPEC_COLUMN_NOTES: Readonly<Record<string, string>> = Object.freeze({
  signature: 'transaction signature',
  protocol_name: 'protocol identifier; indexed',
  program_id: 'program identifier; indexed',
  date: 'indexed; compared with YYYY-MM-DD strings',
  hour: 'hour of day',
  day_of_week: 'derived column usable in exports',
  instruction_type: 'instruction type',
  fee: 'fee in lamports',
  compute_units: 'compute units used',
  accounts_count: 'accounts involved',
  success: 'boolean',
  block_time: 'block time (UTC)',
  slot: 'slot number',
});

export interface Resource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
  /** Its text, read under the asking request's budget. */
  read(caller: ToolCaller): Promise<string>;
}

async function columns(analytics: Analytics): Promise<string> {
  const cols = await analytics.transactionColumns();
  return JSON.stringify({
    table: TABLES.transactions,
    note: 'In JSON answers of run_sql, 64-bit integers (fee, slot, …) arrive as strings.',
    columns: cols.map((c) => ({ ...c, ...(SPEC_COLUMN_NOTES[c.name] === undefined ? {} : { description: SPEC_COLUMN_NOTES[c.name] }) })),
  });
}

export function resources(deps: Pick<ToolDeps, 'analytics' | 'registry' | 'freshness'>): readonly Resource[] {
  return Object.freeze([
    {
      uri: 'txa://tables/transactions/columns',
      name: 'transactions-columns',
      title: 'Columns of the transactions table',
      description: `Name, type and meaning of each column of the SQL table ${TABLES.transactions} (what run_sql reads)`,
      mimeType: 'application/json',
      read: (caller: ToolCaller) => columns(deps.analytics.under(caller.budget)),
    },
    {
      uri: 'txa://protocols',
      name: 'protocols',
      title: 'Protocols',
      description: 'The protocols your key may query, with program ids and data freshness (as list_protocols)',
      mimeType: 'application/json',
      read: async () => JSON.stringify(await protocolList(deps)),
    },
  ]);
}
