// Sign-in and sign-up forms. Errors from the API are shown as they are worded there (weak
// password with the rule, duplicate email, wrong password, attempt limits, closed sign-up).
import { dash } from '../lib/api.js';
import { field, h, replace } from '../lib/dom.js';

export function renderAuth(main, ctx, mode, params) {
  const invite = params.get('invite');
  const signup = mode === 'signup';
  const closed = signup && ctx.meta.signup !== 'open' && !invite;
  const error = h('p', { class: 'error', role: 'alert', id: 'auth-error' });
  const notice = ctx.notice ? h('p', { class: 'notice', role: 'status' }, ctx.notice) : null;
  ctx.notice = null;

  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, maxlength: '254' });
  const password = h('input', {
    type: 'password', name: 'password', required: true,
    autocomplete: signup ? 'new-password' : 'current-password',
    minlength: signup ? String(ctx.meta.passwordMinLength) : undefined,
    maxlength: String(ctx.meta.passwordMaxLength),
  });
  const submit = h('button', { type: 'submit', class: 'primary' }, signup ? 'Create account' : 'Sign in');
  const form = h('form', { class: 'card narrow', novalidate: true, 'aria-describedby': 'auth-error' },
    field('Email', email),
    field('Password', password, signup ? `Use ${ctx.meta.passwordRule}.` : undefined),
    error,
    submit);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    submit.disabled = true;
    try {
      const body = { email: email.value, password: password.value };
      if (invite) body.invite = invite;
      const answer = await dash('POST', signup ? 'signup' : 'signin', body);
      ctx.signedIn(answer);
      history.replaceState(null, '', '#/keys');
      ctx.go('keys');
    } catch (err) {
      error.textContent = err.message;
      password.value = '';
      (err.body?.message?.includes('email') ? email : password).focus();
    } finally {
      submit.disabled = false;
    }
  });

  const other = signup
    ? h('p', null, 'Already have an account? ', h('a', { href: '#/signin' }, 'Sign in'))
    : ctx.meta.signup === 'open'
      ? h('p', null, 'No account yet? ', h('a', { href: '#/signup' }, 'Create one'))
      : h('p', { class: 'muted' }, 'Accounts are by invitation: ask the operator for an invitation link.');

  replace(main,
    h('h1', null, signup ? 'Create an account' : 'Sign in'),
    notice,
    closed
      ? h('p', { class: 'notice' }, 'Sign-up is by invitation only on this service. Ask the operator for an invitation link.')
      : [invite ? h('p', { class: 'notice' }, 'You were invited: choose the password for your account.') : null, form],
    other);
  return null;
}
