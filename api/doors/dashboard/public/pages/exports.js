// Exports: the chosen key's export jobs (GET /v1/query/exports) with progress, cancel and
// download links, refreshed every 2 s while a job runs. A server without export jobs (404)
// is said so plainly.
import { messageOf, service } from '../lib/api.js';
import { fmtInt, fmtNum, fmtTime, h, replace, table } from '../lib/dom.js';
import { currentKey, keyPicker } from '../lib/keyring.js';

const RUNNING = new Set(['QUEUED', 'RUNNING']);

export function renderExports(main) {
  let alive = true;
  let key = currentKey();
  let timer = null;
  const box = h('div', { id: 'exports' });
  const error = h('p', { class: 'error', role: 'alert' });

  async function load() {
    clearTimeout(timer);
    if (!alive || !key) {
      replace(box, h('p', { class: 'muted' }, 'Choose a key to see its export jobs.'));
      return;
    }
    const r = await service(key.secret, 'GET', '/v1/query/exports');
    if (!alive) return;
    if (r.status === 404) {
      replace(box, h('p', { class: 'notice', id: 'exports-unavailable' }, 'Exports are not available on this server.'));
      return;
    }
    if (r.status !== 200) {
      error.textContent = `${r.status}: ${messageOf(r)}`;
      return;
    }
    error.textContent = '';
    const jobs = r.data.jobs ?? [];
    replace(box, table('Export jobs of this key', ['Job', 'Status', 'Progress', 'Rows', 'Size', 'Created', 'Completed', 'Files', 'Actions'], jobs.map((j) => [
      h('code', null, String(j.id).slice(0, 12)),
      j.error ? `${j.status}: ${j.error}` : j.status,
      h('progress', { max: '100', value: String(j.progress ?? 0), 'aria-label': `Progress of job ${String(j.id).slice(0, 12)}` }, `${j.progress ?? 0} %`),
      fmtInt(j.rowCount ?? j.rowsWritten),
      j.fileSize == null ? '–' : `${fmtNum(j.fileSize / 1048576, 2)} MiB`,
      fmtTime(j.createdAt),
      j.completedAt ? fmtTime(j.completedAt) : '–',
      (j.files ?? []).length === 0 ? '–' : h('ul', { class: 'plain' }, j.files.map((f) => h('li', null, h('a', { href: f.url, download: f.name }, f.name)))),
      RUNNING.has(j.status) ? h('button', { type: 'button', class: 'danger small', onclick: () => cancel(j.id) }, 'Cancel') : '',
    ]), { empty: 'No export jobs for this key. Start one with POST /v1/query/exports (docs).' }));
    if (jobs.some((j) => RUNNING.has(j.status))) timer = setTimeout(() => load().catch(show), 2000);
  }
  const show = (err) => { if (alive) error.textContent = err.message; };

  async function cancel(id) {
    const r = await service(key.secret, 'POST', `/v1/query/exports/${encodeURIComponent(id)}/cancel`, {});
    if (r.status !== 200) error.textContent = `${r.status}: ${messageOf(r)}`;
    await load().catch(show);
  }

  const picker = keyPicker((k) => { key = k; load().catch(show); });
  replace(main, h('h1', null, 'Exports'), h('p', { class: 'muted' }, 'Bulk exports of query results to files, per key.'), picker, error, box);
  load().catch(show);
  return () => {
    alive = false;
    clearTimeout(timer);
    picker.dispose();
  };
}
