// How a de-duplication lookup's values reach its statement: as bound parameters, or written
// into it as literals. chDB runs every statement with bound parameters of the process one after
// another, whatever its session (globalParamChain in node_modules/chdb/index.js), while an insert
// takes no such turn: a lookup with no bound parameter is the only one that can run on another
// session while the writer's insert runs (ingest/steps/dedupe-ahead.ts). The literals are safe by
// construction, as the point reads' keys are (api/analytics/records/signature-lookup.ts): numbers
// are checked to be whole and in range here, and strings go in as the hex of their bytes.

const UINT32_MAX = 2 ** 32 - 1;

/** Bound ({name:Type}, the values in `params`) or literal, one statement's values. */
export class LookupArgs {
  readonly params: Record<string, unknown> | undefined;

  constructor(readonly literal: boolean) {
    this.params = literal ? undefined : {};
  }

  uint32(name: string, value: number): string {
    if (this.params !== undefined) {
      this.params[name] = value;
      return `{${name}:UInt32}`;
    }
    return `toUInt32(${checkedUInt32(value)})`;
  }

  uint32s(name: string, values: readonly number[]): string {
    if (this.params !== undefined) {
      this.params[name] = values;
      return `{${name}:Array(UInt32)}`;
    }
    // One string literal of digits and commas, split in the engine: an array literal of thousands of
    // numbers costs the engine's parser more than the lookup's read (bench/RESULTS.md, issue 40, kafka40).
    if (values.length === 0) return 'CAST([] AS Array(UInt32))';
    return `arrayMap(x -> toUInt32(x), splitByChar(',', '${values.map(checkedUInt32).join(',')}'))`;
  }

  strings(name: string, values: readonly string[]): string {
    if (this.params !== undefined) {
      this.params[name] = values;
      return `{${name}:Array(String)}`;
    }
    if (values.length === 0) return 'CAST([] AS Array(String))';
    return `arrayMap(x -> unhex(x), splitByChar(',', '${values.map((s) => Buffer.from(s, 'utf8').toString('hex')).join(',')}'))`;
  }
}

function checkedUInt32(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > UINT32_MAX) throw new TypeError(`not a UInt32: ${String(n)}`);
  return String(n);
}
