// UInt64 values as text, as the engine writes them (toString of a UInt64: canonical decimal,
// no sign, no leading zeros). Signature keys travel so: in address cursors, in the
// references an address page reads, and into the point reads' statement. BigInt alone would
// also take hex, signs, spaces and out-of-range values, so every such text passes here.

export const UINT64_MAX = (1n << 64n) - 1n;

/** Whether `v` is a UInt64 in canonical decimal. */
export const isUInt64Text = (v: unknown): v is string => typeof v === 'string' && /^(0|[1-9]\d{0,19})$/.test(v) && BigInt(v) <= UINT64_MAX;

/** UInt64s as a SQL list of decimal numbers: nothing but a bigint in range can reach it. */
export function uint64List(values: Iterable<bigint>): string {
  const out: string[] = [];
  for (const v of values) {
    if (typeof v !== 'bigint' || v < 0n || v > UINT64_MAX) throw new Error('not a UInt64');
    out.push(v.toString());
  }
  return out.join(', ');
}
