// Playground: a SQL box run through the sandbox (POST /v1/query) with the chosen key, the
// answer as a table with a CSV download, a link to GraphiQL, and copy-paste examples for
// every interface filled with the chosen key.
import { messageOf, service } from '../lib/api.js';
import { copyText, fmtInt, h, replace, table, uid } from '../lib/dom.js';
import { currentKey, keyPicker } from '../lib/keyring.js';

const DEFAULT_SQL = `SELECT protocol_name, count() AS transactions, round(avg(fee)) AS average_fee
FROM transactions
GROUP BY protocol_name
ORDER BY transactions DESC
LIMIT 10`;
const SHOWN_ROWS = 500;

/** RFC 4180: quote every field that needs it, CRLF line ends. */
export function toCsv(columns, rows) {
  const cell = (v) => {
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map(cell).join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\r\n') + '\r\n';
}

function examples(key, inline) {
  const origin = location.origin;
  const k = inline && key ? key.secret : '$TXA_API_KEY';
  const header = key
    ? `# key: ${key.name}${key.id ? ` (id ${key.id})` : ''}${inline ? '' : '\n# export TXA_API_KEY=<the key you stored>'}\n`
    : '# export TXA_API_KEY=<your key>\n';
  return [
    ['curl: SQL', `${header}curl -s ${origin}/v1/query -H "x-api-key: ${k}" -H 'content-type: application/json' \\\n  -d '{"query": "SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY n DESC LIMIT 5"}'`],
    ['JSON-RPC', `${header}curl -s ${origin}/v1/rpc -H "x-api-key: ${k}" -H 'content-type: application/json' \\\n  -d '{"jsonrpc": "2.0", "id": 1, "method": "getTopProtocols", "params": [{"limit": 5}]}'`],
    ['REST', `${header}curl -s "${origin}/api/v1/stats" -H "x-api-key: ${k}"`],
    ['GraphQL', `${header}curl -s ${origin}/graphql -H "x-api-key: ${k}" -H 'content-type: application/json' \\\n  -d '{"query": "{ protocolStats { protocolName totalTransactions successRate } }"}'`],
    ['SQL', 'SELECT toStartOfHour(block_time) AS hour, count() AS n, countIf(NOT success) AS failed\nFROM transactions\nWHERE block_time > now() - INTERVAL 1 DAY\nGROUP BY hour ORDER BY hour'],
  ];
}

export function renderPlayground(main) {
  let alive = true;
  let key = currentKey();
  let last = null;
  const sql = h('textarea', { id: uid('sql'), rows: '7', spellcheck: 'false', class: 'mono', value: DEFAULT_SQL });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run query');
  const csv = h('button', { type: 'button', disabled: true, id: 'download-csv' }, 'Download CSV');
  const status = h('p', { id: 'sql-status', role: 'status', class: 'hint' });
  const error = h('p', { class: 'error', role: 'alert', id: 'sql-error' });
  const result = h('div', { id: 'sql-result' });
  const inline = h('input', { type: 'checkbox', id: uid('inline') });
  const exBox = h('div', { id: 'examples' });

  const form = h('form', { class: 'card', id: 'sql-form' },
    h('div', { class: 'field' }, h('label', { for: sql.id }, 'SQL query'),
      h('p', { class: 'hint', id: 'sql-hint' }, 'One read-only SELECT over transactions, protocol_hourly and instruction_hourly; LIMIT at most 10,000. Ctrl+Enter runs it.'),
      sql),
    h('div', { class: 'row' }, run, csv),
    status, error);
  sql.setAttribute('aria-describedby', 'sql-hint');
  sql.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); } });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    if (!key) {
      error.textContent = 'Choose an API key first (above).';
      return;
    }
    run.disabled = true;
    status.textContent = 'Running…';
    const t0 = performance.now();
    try {
      const r = await service(key.secret, 'POST', '/v1/query', { query: sql.value });
      if (!alive) return;
      if (r.status !== 200) {
        status.textContent = '';
        error.textContent = `${r.status}: ${messageOf(r)}`;
        return;
      }
      const rows = r.data.data;
      const columns = rows.length > 0 ? Object.keys(rows[0]) : [];
      last = { columns, rows };
      csv.disabled = rows.length === 0;
      status.textContent = `${fmtInt(r.data.count)} row${r.data.count === 1 ? '' : 's'} in ${fmtInt(performance.now() - t0)} ms${rows.length > SHOWN_ROWS ? ` (first ${SHOWN_ROWS} shown; the CSV has all)` : ''}.`;
      replace(result, table('Query result', columns, rows.slice(0, SHOWN_ROWS).map((row) => columns.map((c) => {
        const v = row[c];
        return v === null ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      })), { empty: 'The query returned no rows.', class: 'result' }));
    } catch (err) {
      error.textContent = err.message;
      status.textContent = '';
    } finally {
      run.disabled = false;
    }
  });

  csv.addEventListener('click', () => {
    if (!last) return;
    const url = URL.createObjectURL(new Blob([toCsv(last.columns, last.rows)], { type: 'text/csv;charset=utf-8' }));
    const a = h('a', { href: url, download: 'query-result.csv', class: 'visually-hidden' }, 'download');
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });

  function renderExamples() {
    replace(exBox, examples(key, inline.checked).map(([title, text]) => {
      const pre = h('pre', { class: 'mono', tabindex: '0' }, h('code', null, text));
      const done = h('span', { class: 'hint', role: 'status' });
      return h('section', { class: 'example' },
        h('h3', null, title),
        pre,
        h('button', { type: 'button', class: 'small', onclick: async () => { done.textContent = (await copyText(text)) ? 'Copied.' : 'Copy failed.'; } }, `Copy ${title} example`),
        done);
    }));
  }
  inline.addEventListener('change', renderExamples);
  const picker = keyPicker((k) => { key = k; renderExamples(); });

  replace(main,
    h('h1', null, 'Playground'),
    h('p', { class: 'muted' }, 'Run SQL through the same sandbox clients use, with your key (it counts against its limit). Prefer GraphQL? ',
      h('a', { href: '/graphql' }, 'Open GraphiQL'), '.'),
    picker, form, result,
    h('section', { class: 'card', 'aria-labelledby': 'ex-title' },
      h('h2', { id: 'ex-title' }, 'Examples'),
      h('div', { class: 'check' }, inline, h('label', { for: inline.id }, 'Put the key itself into the examples (otherwise they read $TXA_API_KEY)')),
      exBox));
  renderExamples();
  return () => {
    alive = false;
    picker.dispose();
  };
}
