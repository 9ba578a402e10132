// Rows the service cannot trust (written by hand, by an older version, or damaged): found
// at start-up and on /health, reported with what the service does about each, and handled
// fail-closed by the stores (a key with an unknown plan or status answers as inactive; a
// registry row with an unreadable name or program is left out). The process still starts:
// one bad row must not take every other key and protocol down with it.
import { isPlan } from '../core/plans.ts';
import { QUOTED_REGISTRY_VALUE_MAX_CHARS } from '../core/limits/warehouse.ts';
import { BASE58_ADDRESS, PROTOCOL_NAME_PATTERN } from '../core/vocabulary/primitives.ts';
import { isKeyStatus } from './api-key-store.ts';
import { TABLES } from './tables.ts';
import type { Warehouse } from './warehouse.ts';

export interface IntegrityProblem {
  table: string;
  /** The row's identity (key id, protocol name), shortened. */
  row: string;
  problem: string;
  /** What the service does with the row meanwhile. */
  effect: string;
}

const PROTOCOL_NAME = new RegExp(PROTOCOL_NAME_PATTERN);
const ADDRESS = new RegExp(BASE58_ADDRESS);
const shown = (s: string): string =>
  JSON.stringify(s.length > QUOTED_REGISTRY_VALUE_MAX_CHARS ? `${s.slice(0, QUOTED_REGISTRY_VALUE_MAX_CHARS - '...'.length)}...` : s);

/** Is a registry row one the service can use? (The registry leaves the others out.) */
export const usableProtocolRow = (name: string, programId: string): boolean => PROTOCOL_NAME.test(name) && ADDRESS.test(programId);

export async function checkIntegrity(wh: Warehouse): Promise<IntegrityProblem[]> {
  const problems: IntegrityProblem[] = [];
  const keys = await wh.query<{ id: string; plan: string; status: string }>(`SELECT id, plan, status FROM ${TABLES.apiKeys} FINAL`);
  for (const k of keys) {
    const bad = [
      !isPlan(k.plan) ? `plan ${shown(k.plan)} is not a plan` : '',
      !isKeyStatus(k.status) ? `status ${shown(k.status)} is not a key status` : '',
    ].filter(Boolean);
    if (bad.length > 0) {
      problems.push({
        table: TABLES.apiKeys,
        row: shown(k.id),
        problem: bad.join('; '),
        effect: 'the key is refused (403) until the row is fixed (PATCH /admin/keys/:id)',
      });
    }
  }
  const protocols = await wh.query<{ protocol_name: string; program_id: string }>(`SELECT protocol_name, program_id FROM ${TABLES.protocols} FINAL`);
  for (const p of protocols) {
    if (!usableProtocolRow(p.protocol_name, p.program_id)) {
      problems.push({
        table: TABLES.protocols,
        row: shown(p.protocol_name),
        problem: !PROTOCOL_NAME.test(p.protocol_name)
          ? 'the name is not a lowercase snake_case protocol name'
          : `program_id ${shown(p.program_id)} is not a Base58 address`,
        effect: 'left out of the registry: not offered to clients, and its records are refused at ingest',
      });
    }
  }
  return problems;
}
