// Splitting an NDJSON body into records that remember their line numbers, so every
// rejection can say exactly which line it was.
import type { RawRecord } from './steps/records.ts';

export function ndjsonRecords(body: Buffer | string): RawRecord[] {
  const raw = typeof body === 'string' ? body : body.toString('utf8');
  // A UTF-8 byte-order mark opens the file, not line 1's record.
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  const out: RawRecord[] = [];
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo += 1;
    const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (trimmed.trim() === '') continue;
    out.push({ value: trimmed, position: { line: lineNo } });
  }
  return out;
}
