// The dashboard shell: session probe, hash routes (#/keys, #/usage, …), navigation, and the
// sign-in / sign-up forms. Pages are modules exporting render(main, ctx) -> cleanup.
import { dash, setCsrf } from './lib/api.js';
import { announce, h, replace } from './lib/dom.js';
import { renderAuth } from './pages/auth.js';
import { renderKeys } from './pages/keys.js';
import { renderUsage } from './pages/usage.js';
import { renderLive } from './pages/live.js';
import { renderPlayground } from './pages/playground.js';
import { renderExports } from './pages/exports.js';

const PAGES = {
  keys: { title: 'API keys', render: renderKeys },
  usage: { title: 'Usage', render: renderUsage },
  live: { title: 'Live', render: renderLive },
  playground: { title: 'Playground', render: renderPlayground },
  exports: { title: 'Exports', render: renderExports },
};

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const ctx = { meta: null, account: null, notice: null };
let cleanup = null;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [name, query] = raw.split('?');
  return { name: name || '', params: new URLSearchParams(query || '') };
}

export function go(name) {
  if (location.hash === `#/${name}`) route();
  else location.hash = `#/${name}`;
}
ctx.go = go;

function renderNav(current) {
  if (!ctx.account) {
    replace(nav);
    return;
  }
  const links = Object.entries(PAGES).map(([name, p]) =>
    h('li', null, h('a', { href: `#/${name}`, 'aria-current': name === current ? 'page' : undefined }, p.title)));
  const signOut = h('button', { type: 'button', class: 'link', onclick: signOutNow }, 'Sign out');
  replace(nav, h('ul', null, links), h('p', { class: 'who' }, h('span', { class: 'email' }, ctx.account.email), ` · plan ${ctx.account.plan} `, signOut));
}

async function signOutNow() {
  try {
    await dash('POST', 'signout');
  } catch { /* the session is gone either way */ }
  ctx.account = null;
  setCsrf(null);
  ctx.notice = 'You are signed out.';
  go('signin');
}

export function signedIn(answer) {
  ctx.account = answer.account;
  setCsrf(answer.csrfToken);
}
ctx.signedIn = signedIn;

function route() {
  if (cleanup) cleanup();
  cleanup = null;
  const { name, params } = parseHash();
  let page = PAGES[name];
  if (!ctx.account) {
    const mode = name === 'signup' ? 'signup' : 'signin';
    renderNav(null);
    document.title = `${mode === 'signup' ? 'Create an account' : 'Sign in'} · Dashboard`;
    cleanup = renderAuth(main, ctx, mode, params);
  } else {
    if (!page) {
      location.replace('#/keys');
      return;
    }
    renderNav(name);
    document.title = `${page.title} · Dashboard`;
    cleanup = page.render(main, ctx, params) ?? null;
  }
  const heading = main.querySelector('h1');
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus();
  }
  announce(document.title);
}

window.addEventListener('hashchange', route);
window.addEventListener('session-lost', (e) => {
  if (!ctx.account) return;
  ctx.account = null;
  setCsrf(null);
  ctx.notice = e.detail || 'Your session has ended; sign in again.';
  go('signin');
});

async function boot() {
  try {
    ctx.meta = await dash('GET', 'meta');
    const s = await dash('GET', 'session');
    if (s.account) signedIn(s);
    else if (s.reason) ctx.notice = s.reason;
  } catch (err) {
    replace(main, h('h1', null, 'Dashboard unavailable'), h('p', { role: 'alert' }, `The service did not answer: ${err.message}`));
    return;
  }
  route();
}
boot();
