// Sorting a pipeline rejection into a low-cardinality kind, for the dead-letter metric label.
export type RejectKind = 'not_json' | 'schema' | 'unknown_protocol' | 'program_mismatch' | 'oversized' | 'empty';

/** Sort a pipeline rejection reason into a low-cardinality label. */
export function rejectKind(reason: string): RejectKind {
  if (reason.startsWith('record is ') && reason.includes('the limit is')) return 'oversized';
  if (reason.startsWith('empty message')) return 'empty';
  if (reason.startsWith('not valid JSON')) return 'not_json';
  if (reason.startsWith('unknown protocol_name')) return 'unknown_protocol';
  if (reason.startsWith('program_id "')) return 'program_mismatch';
  return 'schema';
}
