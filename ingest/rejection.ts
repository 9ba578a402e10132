// Why a record was not stored, as data: a stable machine code (metric labels, the Kafka
// dead-letter kind header, and what a client can branch on), a detail for people, and
// where the record came from as a structured position (never a string to parse back).
// Every step of the pipeline answers ok or one of these; none throws for a bad record.

export const REJECTION_CODES = [
  'oversized',
  'empty',
  'not_json',
  'not_object',
  'schema',
  'unknown_protocol',
  'program_mismatch',
  'program_unregistered',
  'accounts_count_missing',
  'slot_out_of_range',
] as const;

export type RejectionCode = (typeof REJECTION_CODES)[number];

/** A line of an NDJSON body, or a Kafka message. */
export type Position = { line: number } | { topic: string; partition: number; offset: string };

export interface Rejection {
  code: RejectionCode;
  detail: string;
  position: Position;
}

/** The position as people (and the dead-letter table's text column) read it. */
export function positionText(p: Position): string {
  return 'line' in p ? `line ${p.line}` : `${p.topic}/${p.partition}/${p.offset}`;
}

/** A record check's refusal, before the pipeline adds where the record came from. */
export interface Refusal {
  ok: false;
  code: RejectionCode;
  detail: string;
}

export const refuse = (code: RejectionCode, detail: string): Refusal => ({ ok: false, code, detail });
