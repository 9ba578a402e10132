// The warehouse's table names and the base table's row, defined once: SQL elsewhere names
// tables through TABLES, the ingest path writes BASE_COLUMNS, and test/migrations.test.ts
// checks that every name here is a table the migrations create.
import { Type, type Static } from '@sinclair/typebox';

export const TABLES = {
  /** The base table: one row per instruction record (migration 001). */
  transactions: 'transactions',
  /** Records by id (rid, migration 110), each in one JSON column (090's array): address pages read their records here. */
  txByRid: 'tx_by_rid',
  /** (sig_key = cityHash64(signature), instruction_index) → rid: the way from a signature to its records in txByRid, for point lookups, signature filters and de-duplication (110; read through warehouse/signature-records.ts). */
  txRidBySig: 'tx_rid_by_sig',
  /** One row per (address, record) in (address hash, rid) order: address histories, pages and counts (110; 003's before). */
  txByAddress: 'tx_by_address_v2',
  /** Stored identities in time order (block_time, sig_key, instruction_index): ingest's de-duplication reads the batch's seconds (120). */
  ingestKeys: 'ingest_keys',
  /** An NDJSON batch's lines as received, and the engine's checks of them (migration 121). */
  ingestLines: 'ingest_lines',
  ingestChecked: 'ingest_checked',
  /** The checks as a parameterised view over ingest_lines (121; replaced by 122's cheaper, same answers). */
  ingestLineChecks: 'ingest_line_checks',
  protocolHourly: 'protocol_hourly',
  instructionHourly: 'instruction_hourly',
  failureHourly: 'failure_hourly',
  /** Newest block_time and ingest time per protocol (011). */
  ingestFreshness: 'ingest_freshness',
  protocols: 'protocols',
  deadLetters: 'dead_letters',
  ingestJournal: 'ingest_journal',
  apiKeys: 'api_keys',
  apiKeyUsage: 'api_key_usage',
  x402Payments: 'x402_payments',
  x402PaymentClaims: 'x402_payment_claims',
  /** Dashboard accounts: email, password hash, plan, status, invitation (030). */
  accounts: 'accounts',
  /** Dashboard sessions by the hash of their token (032). */
  dashboardSessions: 'dashboard_sessions',
} as const;

// The published tables are the client-facing part of the schema: what client SQL may read
// and what client-facing storage figures describe. Every other table (lookups, the
// registry, keys, usage, dead letters, the journal) is internal and never named to a client.
export const PUBLISHED_TABLES: readonly string[] = Object.freeze([TABLES.transactions, TABLES.protocolHourly, TABLES.instructionHourly]);

/** A row as the base table takes it (derived columns such as sig_key are computed by the table). */
export const BaseRow = Type.Object({
  signature: Type.String(),
  instruction_index: Type.Integer(),
  /** The transaction's position in its block (the record id's middle part, migration 110): as sent, or the writer's per-slot counter. */
  transaction_index: Type.Optional(Type.Integer()),
  /** UInt64 as a decimal string: it can exceed 2^53. */
  slot: Type.String(),
  block_time: Type.Integer(),
  program_id: Type.String(),
  protocol_name: Type.String(),
  instruction_type: Type.String(),
  fee: Type.Integer(),
  compute_units: Type.Integer(),
  accounts: Type.Array(Type.String()),
  accounts_count: Type.Integer(),
  success: Type.Boolean(),
  error_message: Type.String(),
  log_messages: Type.String(),
  raw_data: Type.String(),
});
export type BaseRow = Static<typeof BaseRow>;

/** The columns an insert into the base table names, in the order of BaseRow. */
export const BASE_COLUMNS = Object.freeze(Object.keys(BaseRow.properties)) as readonly (keyof BaseRow)[];
