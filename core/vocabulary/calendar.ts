// A regular expression for the real calendar days (YYYY-MM-DD, UTC, leap years included)
// between two days, so that a JSON Schema `pattern` states the same rule as dayStart()
// (primitives.ts): a document reader (a client, a fuzzer) learns from the pattern alone
// that 2025-02-30 or 4157-52-69 is refused, and which days the store can hold.

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
/** Days of each month of a common year (February 29 is handled apart). */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Days of the shortest month: a month bucket is at least this wide. */
export const SHORTEST_MONTH_DAYS = Math.min(...MONTH_DAYS);
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Alternatives matching exactly the decimal numbers lo..hi written with `lo.length` digits. */
export function digitRange(lo: string, hi: string): string[] {
  if (lo.length === 0 || lo === hi) return [lo];
  const [a, b] = [Number(lo[0]), Number(hi[0])];
  const [restLo, restHi] = [lo.slice(1), hi.slice(1)];
  if (a === b) return digitRange(restLo, restHi).map((r) => `${a}${r}`);
  const zeros = '0'.repeat(restLo.length);
  const nines = '9'.repeat(restLo.length);
  const out: string[] = [];
  const first = restLo === zeros ? a : a + 1;
  if (restLo !== zeros) out.push(...digitRange(restLo, nines).map((r) => `${a}${r}`));
  const last = restHi === nines ? b : b - 1;
  if (first <= last) out.push(`${first === last ? first : `[${first}-${last}]`}${'[0-9]'.repeat(restLo.length)}`);
  if (restHi !== nines) out.push(...digitRange(zeros, restHi).map((r) => `${b}${r}`));
  return out;
}

const alt = (parts: string[]): string => (parts.length === 1 ? parts[0]! : `(?:${parts.join('|')})`);

/** MM-DD of a common year from `from` to `to` (both MM-DD, inclusive), as alternatives. */
function monthDays(from: string, to: string): string[] {
  const out: string[] = [];
  for (let m = 1; m <= 12; m++) {
    const mm = pad(m, 2);
    if (mm < from.slice(0, 2) || mm > to.slice(0, 2)) continue;
    const lo = mm === from.slice(0, 2) ? from.slice(3) : '01';
    const hi = pad(Math.min(mm === to.slice(0, 2) ? Number(to.slice(3)) : 31, MONTH_DAYS[m - 1]!), 2);
    if (lo <= hi) out.push(`${mm}-${alt(digitRange(lo, hi))}`);
  }
  return out;
}

/** `^…$` matching the calendar days min..max (YYYY-MM-DD, years 1000-9999). */
export function calendarDayPattern(min: string, max: string): string {
  const [minYear, maxYear] = [Number(min.slice(0, 4)), Number(max.slice(0, 4))];
  const branches: string[] = [];
  if (minYear === maxYear) {
    branches.push(`${minYear}-${alt(monthDays(min.slice(5), max.slice(5)))}`);
  } else {
    // Whole years in one branch; a first or last year begun or ended part-way in its own.
    const wholeFrom = min.slice(5) === '01-01' ? minYear : minYear + 1;
    const wholeTo = max.slice(5) === '12-31' ? maxYear : maxYear - 1;
    if (wholeFrom !== minYear) branches.push(`${minYear}-${alt(monthDays(min.slice(5), '12-31'))}`);
    if (wholeFrom <= wholeTo) branches.push(`${alt(digitRange(String(wholeFrom), String(wholeTo)))}-${alt(monthDays('01-01', '12-31'))}`);
    if (wholeTo !== maxYear) branches.push(`${maxYear}-${alt(monthDays('01-01', max.slice(5)))}`);
  }
  const leapDays: string[] = [];
  for (let y = minYear; y <= maxYear; y++) {
    const day = `${y}-02-29`;
    if (isLeap(y) && day >= min && day <= max) leapDays.push(String(y));
  }
  if (leapDays.length > 0) branches.push(`${alt(leapDays)}-02-29`);
  return `^(?:${branches.join('|')})$`;
}

/** Seconds from a day's first instant to its last (23:59:59). */
export const LAST_SECOND_OF_DAY = 86_399;
