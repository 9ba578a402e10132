// API keys held in this page's memory only (never in storage): a key created here is kept
// until the page reloads; otherwise the user pastes one. Pages that call the service pick
// one through keyPicker().
import { h, uid } from './dom.js';

const held = new Map(); // secret -> {secret, id, name}
let chosen = null;
const listeners = new Set();

/** Keys of the account as last listed ({id, name, keyPrefix, status}), to name pasted keys. */
let known = [];
export const setKnownKeys = (list) => { known = list; };

export function remember(secret, id, name) {
  const entry = { secret, id, name };
  held.set(secret, entry);
  chosen = entry;
  for (const l of listeners) l(chosen);
}

export const currentKey = () => chosen;

function use(secret) {
  const s = secret.trim();
  if (s === '') return;
  const match = known.find((k) => s.startsWith(k.keyPrefix));
  chosen = held.get(s) ?? { secret: s, id: match?.id ?? null, name: match?.name ?? 'pasted key' };
  held.set(s, chosen);
  for (const l of listeners) l(chosen);
}

/** A small form: choose a held key or paste one. `onChange(key)` runs with the choice. */
export function keyPicker(onChange) {
  const box = h('section', { class: 'card keypicker', 'aria-labelledby': uid('kp') });
  const headingId = box.getAttribute('aria-labelledby');
  const status = h('p', { class: 'hint', id: uid('kps') });
  const render = () => {
    const select = h('select', { id: uid('kpsel') }, [...held.values()].map((k) =>
      h('option', { value: k.secret, selected: chosen?.secret === k.secret }, `${k.name}${k.id ? ` (${k.id.slice(0, 8)}…)` : ''}`)));
    select.addEventListener('change', () => use(select.value));
    const paste = h('input', { type: 'password', id: uid('kpin'), autocomplete: 'off', spellcheck: 'false', placeholder: 'txa_…', class: 'mono' });
    const form = h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); use(paste.value); paste.value = ''; } },
      h('div', { class: 'field grow' }, h('label', { for: paste.id }, 'Paste an API key'), paste),
      h('button', { type: 'submit' }, 'Use this key'));
    status.textContent = chosen
      ? `Using ${chosen.name}. The key stays in this page's memory only; reloading forgets it.`
      : 'No key chosen: create one on the Keys page or paste one you stored. It stays in this page\'s memory only.';
    box.replaceChildren(
      h('h2', { id: headingId }, 'API key for this page'),
      held.size > 0 ? h('div', { class: 'field' }, h('label', { for: select.id }, 'Key held in this page'), select) : null,
      form,
      status,
    );
  };
  const listener = (k) => { render(); onChange(k); };
  listeners.add(listener);
  render();
  // Remove the listener when the page goes away.
  box.dispose = () => listeners.delete(listener);
  return box;
}
