// Helpers for JSON-RPC tests: send calls through the real app (app.inject) with the
// API-key headers, and a known data set (demo records plus hand-made ones).
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../api/services.ts';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import { PROTOCOL_PROFILES } from '../../ingest/protocol-profiles.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { apiKeyHeaders } from './api-key.ts';

export interface RpcError {
  code: number;
  message: string;
  data: string;
}

export interface RpcAnswer<T = unknown> {
  jsonrpc: string;
  id: string | number | null;
  result?: T;
  error?: RpcError;
}

export interface RawReply {
  status: number;
  body: string;
  json: unknown;
}

export class RpcClient {
  private nextId = 1;

  private constructor(
    readonly app: FastifyInstance,
    readonly headers: Record<string, string>,
  ) {}

  static async create(app: FastifyInstance): Promise<RpcClient> {
    return new RpcClient(app, await apiKeyHeaders(app));
  }

  /** POST any body (object or raw text) to /v1/rpc. */
  async raw(payload: unknown, contentType = 'application/json'): Promise<RawReply> {
    const res = await this.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { ...this.headers, 'content-type': contentType },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: res.statusCode, body: res.body, json: res.body === '' ? undefined : JSON.parse(res.body) };
  }

  /** One call; returns the whole answer after checking HTTP 200 and the envelope. */
  async answer<T = unknown>(method: string, params?: unknown[]): Promise<RpcAnswer<T>> {
    const id = this.nextId++;
    const reply = await this.raw({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    if (reply.status !== 200) throw new Error(`HTTP ${reply.status}: ${reply.body}`);
    const a = reply.json as RpcAnswer<T>;
    if (a.jsonrpc !== '2.0' || a.id !== id) throw new Error(`bad envelope: ${reply.body}`);
    return a;
  }

  /** One call that must succeed; returns its result. */
  async call<T = unknown>(method: string, params?: unknown[]): Promise<T> {
    const a = await this.answer<T>(method, params);
    if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error)}`);
    return a.result as T;
  }

  /** One call that must fail; returns its error object. */
  async error(method: string, params?: unknown[]): Promise<RpcError> {
    const a = await this.answer(method, params);
    if (!a.error) throw new Error(`${method} unexpectedly succeeded: ${JSON.stringify(a.result).slice(0, 200)}`);
    return a.error;
  }
}

/** 2025-01-01T00:00:00Z: the demo window starts here and spans DEMO_DAYS days. */
export const DEMO_START = 1_735_689_600;
export const DEMO_DAYS = 3;
export const DEMO_END = DEMO_START + DEMO_DAYS * 86_400;

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A deterministic Base58 string of `len` characters from a label. */
export function b58(label: string, len: number): string {
  let h = 2166136261;
  let out = '';
  for (let i = 0; out.length < len; i++) {
    h ^= (label.charCodeAt(i % label.length) + i) & 0xff;
    h = Math.imul(h, 16777619) >>> 0;
    out += B58[h % 58];
  }
  return out;
}

/** Ingest records through the real pipeline; fails the test on any rejection. */
export async function ingest(services: Services, records: readonly (IngestRecord | string)[]): Promise<void> {
  const report = await services.pipeline.ingest(records.map((r, i) => ({ value: typeof r === 'string' ? r : r as object, position: { line: i + 1 } })), 'test');
  if (report.rejected.length > 0) throw new Error(`rejected: ${JSON.stringify(report.rejected.slice(0, 3))}`);
}

/** Ingest `total` demo records (all registry protocols, active or not) over the demo window. */
export async function ingestDemo(services: Services, total = 3000, seed = 7): Promise<void> {
  const ndjson = await demoRecordsNdjson(services.wh, { seed, total, offset: 0, count: total, startTime: DEMO_START, endTime: DEMO_END });
  await ingest(services, ndjson.split('\n').filter((l) => l.trim() !== ''));
}

/** The hand-made hot address: hundreds of records over several protocols, statuses and times. */
export const HOT = b58('hot-address', 44);
export const PROGRAM_OF: Record<string, string> = Object.fromEntries(PROTOCOL_PROFILES.map((p) => [p.protocol, p.programId]));
export const ACTIVE_PROTOCOLS = ['jupiter_v4', 'jupiter_v6', 'pump_amm', 'pump_fun', 'raydium_amm_v3', 'raydium_cp_swap', 'whirlpool'];

/**
 * 260 records touching HOT: five protocols (raydium_amm_v4 is inactive, so hidden),
 * one failure in seven, every tenth record at the same second as the one before (ties),
 * and every 25th signature with a second instruction.
 */
export function hotRecords(prefix = 'hot', count = 250, start = DEMO_START): IngestRecord[] {
  const protocols = ['jupiter_v6', 'pump_fun', 'whirlpool', 'raydium_amm_v4', 'pump_amm'];
  const out: IngestRecord[] = [];
  let t = start + 17;
  for (let i = 0; i < count; i++) {
    if (i % 10 !== 0) t += 600 + ((i * 7919) % 300);
    const protocol = protocols[i % protocols.length]!;
    const base: IngestRecord = {
      signature: b58(`${prefix}-${i}`, 88),
      instruction_index: 0,
      slot: 300_000_000 + i,
      block_time: t,
      program_id: PROGRAM_OF[protocol]!,
      protocol_name: protocol,
      instruction_type: i % 2 === 0 ? 'swap' : 'buy',
      fee: 5000 + i * 11,
      compute_units: 20_000 + i * 37,
      accounts: [HOT, b58(`acct-${i % 5}`, 44)],
      success: i % 7 !== 0,
      ...(i % 7 === 0 ? { error_message: `failure ${i}`, log_messages: [`log a ${i}`, `log b ${i}`], raw_data: b58(`raw-${i}`, 40) } : {}),
    };
    out.push(base);
    if (i % 25 === 0) out.push({ ...base, instruction_index: 1, instruction_type: 'claim', compute_units: base.compute_units + 1 });
  }
  return out;
}

/** A Transaction object as JSON-RPC returns it, computed straight from the base table. */
export interface TxObject {
  signature: string;
  slot: string;
  blockTime: number;
  programId: string;
  protocolName: string;
  instructionType: string;
  fee: number;
  computeUnits: number;
  accountsCount: number;
  success: boolean;
}

/** Records of active protocols matching `where`, in `order`, from plain SQL on `transactions`. */
export async function sqlTransactions(services: Services, where: string, params: Record<string, unknown>, order: string): Promise<TxObject[]> {
  const rows = await services.wh.query<Record<string, string | number | boolean>>(
    `SELECT signature, toString(slot) AS slot, toUInt32(block_time) AS bt, program_id, protocol_name, instruction_type,
            fee, compute_units, accounts_count, success
     FROM transactions WHERE protocol_name IN {active_:Array(String)} AND (${where}) ORDER BY ${order}`,
    { params: { ...params, active_: ACTIVE_PROTOCOLS } },
  );
  return rows.map((r) => ({
    signature: String(r.signature),
    slot: String(r.slot),
    blockTime: Number(r.bt),
    programId: String(r.program_id),
    protocolName: String(r.protocol_name),
    instructionType: String(r.instruction_type),
    fee: Number(r.fee),
    computeUnits: Number(r.compute_units),
    accountsCount: Number(r.accounts_count),
    success: Boolean(r.success),
  }));
}
