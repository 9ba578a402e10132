// Hand-made ingest records placed in chosen (protocol, hour) buckets, and an SSE reader
// over a real socket, for the live-subscription tests and benchmark-like checks.
import { randomBytes } from 'node:crypto';
import type { IngestRecord } from '../../ingest/record-schema.ts';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function randomSignature(): string {
  const bytes = randomBytes(88);
  let s = '';
  for (const b of bytes) s += BASE58[b % 58];
  return s;
}

/** A valid record of `protocol` (with its registered program id) at `blockTime`. */
export function liveRecord(protocol: { protocolName: string; programId: string }, blockTime: number, i: number): IngestRecord {
  return {
    signature: randomSignature(),
    slot: 300_000_000 + i,
    block_time: blockTime,
    program_id: protocol.programId,
    protocol_name: protocol.protocolName,
    instruction_type: 'swap',
    fee: 5000 + (i % 7) * 1000,
    compute_units: 100_000 + (i % 11) * 1000,
    accounts_count: 3,
    success: i % 5 !== 0,
    ...(i % 5 === 0 ? { error_message: 'custom program error: 0x1771' } : {}),
  };
}

export interface SseEvent {
  event: string;
  data: string;
  /** The event's `id:` (resumable streams), when it has one. */
  id?: string;
}

/** Parse complete SSE events (and count comment lines) out of a text buffer; returns the rest. */
export function parseSse(buffer: string): { events: SseEvent[]; comments: number; rest: string } {
  const events: SseEvent[] = [];
  let comments = 0;
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments += 1;
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0 || event !== 'message') events.push({ event, data: data.join('\n'), ...(id === undefined ? {} : { id }) });
  }
  return { events, comments, rest };
}
