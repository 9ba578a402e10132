// The operator's part of the usage page: revenue and calls per payer of the x402 plan (keyless
// calls paid per call in USDC on Solana, docs/x402.md). It reads GET /admin/x402/payers with
// the operator token, which the operator types here: it is kept in this page's memory only,
// and no account's session can read the report without it.
import { h, fmtInt, fmtTime, replace, table, uid } from '../lib/dom.js';

/** USDC and every Solana stablecoin the demo uses have 6 decimals: atomic units as a decimal amount. */
const DECIMALS = 6;
function tokens(atomic) {
  const s = String(atomic).padStart(DECIMALS + 1, '0');
  return `${s.slice(0, -DECIMALS)}.${s.slice(-DECIMALS)}`;
}

const short = (address) => (address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address);

/** The section: a form for the operator token, then the last 30 days' payers, largest first. */
export function x402Revenue() {
  const tokenInput = h('input', { id: uid('x402t'), type: 'password', autocomplete: 'off', required: true });
  const out = h('div', { id: 'x402-payers' });
  const error = h('p', { class: 'error', role: 'alert', id: 'x402-error' });
  let token = '';

  async function load() {
    const res = await fetch('/admin/x402/payers', { headers: { accept: 'application/json', authorization: `Bearer ${token}` } });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.message || `HTTP ${res.status}`);
    const total = body.data.reduce((sum, p) => sum + BigInt(p.amount), 0n);
    const calls = body.data.reduce((sum, p) => sum + p.calls, 0);
    replace(out,
      h('div', { class: 'stats' },
        h('div', { class: 'stat' }, h('p', { class: 'label' }, 'Paid calls (30 days)'), h('p', { class: 'value', id: 'x402-calls' }, fmtInt(calls))),
        h('div', { class: 'stat' }, h('p', { class: 'label' }, 'Revenue (30 days)'), h('p', { class: 'value', id: 'x402-revenue' }, tokens(total)))),
      table('Revenue and calls per payer', ['Payer', 'Calls', 'Paid', 'Last paid'],
        body.data.map((p) => [h('abbr', { title: p.payer, class: 'payer' }, short(p.payer)), fmtInt(p.calls), `${tokens(p.amount)} (${short(p.asset)})`, fmtTime(p.lastPaidAt)]),
        { empty: 'No paid calls in the last 30 days.' }));
  }

  const form = h('form', {
    class: 'row',
    onsubmit: (e) => {
      e.preventDefault();
      token = tokenInput.value;
      error.textContent = '';
      load().catch((err) => { error.textContent = err.message; });
    },
  },
  h('div', { class: 'field' }, h('label', { for: tokenInput.id }, 'Operator token'), tokenInput),
  h('button', { type: 'submit' }, 'Show x402 revenue'));

  return h('section', { class: 'card', 'aria-labelledby': 'x402-title' },
    h('h2', { id: 'x402-title' }, 'Pay per call (x402): revenue per payer'),
    h('p', { class: 'muted' }, 'For the operator: keyless calls paid per call in USDC on Solana, with their payers, calls and amounts (6 decimals). Needs the operator token.'),
    form, error, out);
}
