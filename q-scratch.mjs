import { Session } from 'chdb';
const s = new Session('/tmp/exp/data');
for (const q of process.argv.slice(2)) {
  try { console.log((await s.queryAsync(q, {format:'TSVWithNames'})).text()); }
  catch (e) { console.log('ERR', e.message.slice(0,400)); }
}
