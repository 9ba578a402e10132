// Is chDB's leftover output of a failed statement (warehouse/session-turns.ts) per session?
// Two raw sessions over one data directory, no drain: a statement failing on A (a result over
// its limit, as JSONEachRowWithProgress, the format the transport asks for), then statements on
// A and on B, one after another and at once. Counts answers that were not their own (of 20).
// Run: npx tsx bench/session-leftovers.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
const dir = mkdtempSync(path.join(tmpdir(), 'probe-'));
const a = new Session(dir);
const b = new Session(dir);
const FAIL = "SELECT number AS n, {t:String} AS tag FROM numbers(200000) SETTINGS max_result_rows=10, result_overflow_mode='throw'";
const fail = (s: Session) =>
  s.queryBindAsync(FAIL, { t: 'failed' }, { format: 'JSONEachRowWithProgress' }).then(
    () => 'ok',
    () => 'failed',
  );
const ask = async (s: Session, k: string) => (await s.queryBindAsync('SELECT {k:String}', { k }, { format: 'TSV' })).text();
const c = { sameSeq: 0, sameConc: 0, otherSeq: 0, otherConc: 0, ownAfterOther: 0 };
for (let i = 0; i < 20; i++) {
  // control: same session, sequential and concurrent
  await fail(a);
  if ((await ask(a, `s${i}`)) !== `s${i}\n`) c.sameSeq++;
  const [, x] = await Promise.all([fail(a), ask(a, `t${i}`)]);
  if (x !== `t${i}\n`) c.sameConc++;
  await ask(a, 'flush');
  // other session
  await fail(a);
  if ((await ask(b, `b${i}`)) !== `b${i}\n`) c.otherSeq++;
  const [, y] = await Promise.all([fail(a), ask(b, `c${i}`)]);
  if (y !== `c${i}\n`) c.otherConc++;
  if ((await ask(a, `a${i}`)) !== `a${i}\n`) c.ownAfterOther++;
}
console.log(JSON.stringify(c));
a.close();
b.close();
rmSync(dir, { recursive: true, force: true });
