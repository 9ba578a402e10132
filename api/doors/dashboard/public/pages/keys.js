// Keys: create (name + environment), the secret shown once with a copy button and a warning,
// the list with status, environment, created and last used, revocation after confirmation.
import { dash } from '../lib/api.js';
import { announce, copyText, field, fmtTime, h, replace, table, uid } from '../lib/dom.js';
import { remember, setKnownKeys } from '../lib/keyring.js';

export function renderKeys(main, ctx) {
  const listBox = h('div', { id: 'key-list' }, h('p', { class: 'muted' }, 'Loading keys…'));
  const secretBox = h('div', { id: 'new-key' });
  const error = h('p', { class: 'error', role: 'alert' });
  let alive = true;

  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: String(ctx.meta.keyNameMaxLength), autocomplete: 'off' });
  const envList = uid('envs');
  const environment = h('input', { type: 'text', name: 'environment', list: envList, value: 'production', maxlength: String(ctx.meta.environmentMaxLength), autocomplete: 'off' });
  const create = h('button', { type: 'submit', class: 'primary' }, 'Create key');
  const form = h('form', { class: 'card', id: 'create-key' },
    h('h2', null, 'Create a key'),
    h('div', { class: 'row' },
      h('div', { class: 'grow' }, field('Name', name, 'For you to recognise it, e.g. "trading bot".')),
      h('div', null, field('Environment', environment, 'production, staging, development or your own label.'),
        h('datalist', { id: envList }, ctx.meta.environments.map((e) => h('option', { value: e }))))),
    error,
    create);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    create.disabled = true;
    try {
      const k = await dash('POST', 'keys', { name: name.value, environment: environment.value });
      remember(k.key, k.id, k.name);
      showSecret(k);
      name.value = '';
      await load();
    } catch (err) {
      error.textContent = err.message;
    } finally {
      create.disabled = false;
    }
  });

  function showSecret(k) {
    const secret = h('input', { type: 'text', readonly: true, value: k.key, id: 'new-secret', class: 'mono grow', 'aria-describedby': 'new-key-warning', spellcheck: 'false' });
    const copied = h('span', { class: 'hint', role: 'status' });
    const copy = h('button', { type: 'button', onclick: async () => {
      copied.textContent = (await copyText(k.key, secret)) ? 'Copied.' : 'Copy failed: select the key and copy it by hand.';
    } }, 'Copy');
    const done = h('button', { type: 'button', onclick: () => { replace(secretBox); announce('Key hidden.'); } }, 'I have stored it');
    replace(secretBox, h('section', { class: 'card warn', 'aria-labelledby': 'new-key-title' },
      h('h2', { id: 'new-key-title' }, 'Your new key: ', h('span', { class: 'keyname' }, k.name)),
      h('p', { id: 'new-key-warning', class: 'strong' },
        'Copy it now: this is the only time it is shown. Store it somewhere safe (a secret manager, an environment variable). ',
        'If you lose it, revoke it and create a new one.'),
      h('div', { class: 'row' }, h('label', { for: 'new-secret', class: 'visually-hidden' }, 'New API key'), secret, copy, done),
      copied));
    secret.focus();
    secret.select();
  }

  const dialog = h('dialog', { id: 'revoke-dialog', 'aria-labelledby': 'revoke-title' });
  function confirmRevoke(k) {
    const go = h('button', { type: 'button', class: 'danger', onclick: async () => {
      go.disabled = true;
      try {
        await dash('POST', `keys/${encodeURIComponent(k.id)}/revoke`);
        dialog.close();
        announce(`Key ${k.name} revoked.`);
        await load();
      } catch (err) {
        msg.textContent = err.message;
        go.disabled = false;
      }
    } }, 'Revoke key');
    const msg = h('p', { class: 'error', role: 'alert' });
    replace(dialog,
      h('h2', { id: 'revoke-title' }, 'Revoke ', h('span', { class: 'keyname' }, k.name), '?'),
      h('p', null, 'Every request with this key is refused (403) within a second. This cannot be undone: applications using it need a new key.'),
      msg,
      h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'), go));
    dialog.showModal();
  }

  async function load() {
    const { data } = await dash('GET', 'keys');
    if (!alive) return;
    setKnownKeys(data);
    const rows = data.slice().reverse().map((k) => [
      h('span', { class: 'keyname' }, k.name),
      k.environment || '–',
      h('code', null, `${k.keyPrefix}…`),
      h('span', { class: `badge ${k.status}` }, k.status),
      fmtTime(k.createdAt),
      fmtTime(k.lastUsedAt),
      k.status === 'revoked' ? '' : h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${k.name}`, onclick: () => confirmRevoke(k) }, 'Revoke'),
    ]);
    replace(listBox, table('Your API keys', ['Name', 'Environment', 'Key', 'Status', 'Created', 'Last used', 'Actions'], rows,
      { empty: 'No keys yet: create one above.', class: 'keys' }));
  }

  replace(main,
    h('h1', null, 'API keys'),
    h('p', { class: 'muted' }, 'Send a key in the x-api-key header. Use a separate key for each environment, so one can be revoked without stopping the others. Keys serve your plan: ', h('strong', null, ctx.account.plan), '.'),
    secretBox, form, listBox, dialog);
  load().catch((err) => { if (alive) replace(listBox, h('p', { class: 'error', role: 'alert' }, err.message)); });
  return () => { alive = false; };
}
