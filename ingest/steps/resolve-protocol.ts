// Step 3, resolve the protocol from the registry (DESIGN.md section 5: the registry maps
// program id -> protocol name). Refuses `unknown_protocol`, `program_unregistered` and
// `program_mismatch`.
import { deadLetter, ok, type RecordResult } from './step.ts';
import type { IngestRecord } from './validate.ts';

/** The protocol registry as the step needs it, every protocol included, active or not. */
export interface ProtocolLookup {
  /** protocol name -> its program id */
  programOf: ReadonlyMap<string, string>;
  /** program id -> protocol name */
  protocolOf: ReadonlyMap<string, string>;
}

export function protocolLookup(entries: Iterable<{ protocolName: string; programId: string }>): ProtocolLookup {
  const programOf = new Map<string, string>();
  const protocolOf = new Map<string, string>();
  for (const e of entries) {
    programOf.set(e.protocolName, e.programId);
    protocolOf.set(e.programId, e.protocolName);
  }
  return { programOf, protocolOf };
}

export function resolveProtocol(r: IngestRecord, registry: ProtocolLookup): RecordResult<IngestRecord> {
  const program = registry.programOf.get(r.protocol_name);
  if (program === undefined) return deadLetter('unknown_protocol', `unknown protocol_name "${r.protocol_name}"`);
  // The program id decides the protocol: a record naming one protocol with another's
  // program (or with a program the registry does not know) would be counted under the
  // wrong protocol in every aggregate, so it is refused rather than trusted.
  const owner = registry.protocolOf.get(r.program_id);
  if (owner === undefined) {
    return deadLetter('program_unregistered', `program_id "${r.program_id}" is not in the protocol registry; the program of ${r.protocol_name} is ${program}`);
  }
  if (owner !== r.protocol_name) return deadLetter('program_mismatch', `program_id "${r.program_id}" is the program of ${owner}, not of ${r.protocol_name}`);
  return ok(r);
}
