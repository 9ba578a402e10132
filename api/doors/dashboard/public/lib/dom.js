// Building DOM from data without ever parsing HTML: every string becomes a text node or an
// attribute value, so a key named <img src=x onerror=...> shows as those characters.

/** h('button', {class: 'x', onclick: fn}, 'text', child, [more]) */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value' || k === 'checked' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let ids = 0;
/** A unique id for label/aria links. */
export const uid = (p = 'f') => `${p}-${++ids}`;

/** A labelled form field: {label, hint, input} wrapped in a div. */
export function field(label, input, hint) {
  const id = input.id || uid();
  input.id = id;
  const parts = [h('label', { for: id }, label), input];
  if (hint) {
    const hid = uid('hint');
    input.setAttribute('aria-describedby', hid);
    parts.splice(1, 0, h('p', { class: 'hint', id: hid }, hint));
  }
  return h('div', { class: 'field' }, parts);
}

/** A table in a scroll box that keyboard users can scroll too. */
export function table(caption, headers, rows, opts = {}) {
  const t = h('table', { class: opts.class },
    h('caption', { class: opts.hideCaption ? 'visually-hidden' : undefined }, caption),
    h('thead', null, h('tr', null, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', null, rows.length === 0
      ? h('tr', null, h('td', { colspan: headers.length, class: 'muted' }, opts.empty ?? 'Nothing yet.'))
      : rows.map((r) => h('tr', null, r.map((c) => h('td', null, c))))));
  return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption }, t);
}

export const fmtInt = (n) => (Number.isFinite(Number(n)) ? Math.round(Number(n)).toLocaleString('en-US') : '–');
export const fmtNum = (n, d = 1) => (Number.isFinite(Number(n)) ? Number(n).toLocaleString('en-US', { maximumFractionDigits: d }) : '–');
export const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' }) : 'never');

/** Tell screen readers (and the test) what just happened. */
export function announce(text) {
  const s = document.getElementById('status');
  if (s) s.textContent = text;
}

/** Copy text to the clipboard; resolves true when it worked. */
export async function copyText(text, fallbackInput) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (fallbackInput) {
      fallbackInput.select();
      return document.execCommand('copy');
    }
    return false;
  }
}
