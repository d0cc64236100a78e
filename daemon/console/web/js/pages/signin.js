// Sign-in: paste an API token (from the daemon's token file) to get a
// session, or follow the one-time link `quire ui` prints.

import { post } from '../api.js';
import { h, clear, field } from '../dom.js';

export async function render(ctx) {
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'current-password', required: true, id: 'token' });
  const out = h('div', { 'aria-live': 'assertive' });
  const form = h('form', { 'aria-label': 'Sign in' },
    field('Access token', token, 'a token from the daemon’s token file'),
    h('p', {}, h('button', { type: 'submit', text: 'Sign in' })), out);
  ctx.main.append(h('div', { class: 'signin card' },
    h('h1', { text: 'Sign in to the Quire console' }),
    h('p', {}, 'Run ', h('code', { text: 'quire ui' }), ' on the machine of the daemon: it prints a one-time sign-in link (and opens it where there is a browser). Or paste a token:'),
    form));
  const signIn = async (body) => {
    try {
      await post('/ui/api/login', body);
    } catch (err) {
      clear(out, h('div', { class: 'alert', role: 'alert' }, h('strong', { text: 'Not signed in: ' }), err.status === 401 ? 'the daemon does not know this token or link (a link works once, for 5 minutes).' : err.message));
      return;
    }
    await ctx.signedIn();
    const next = ctx.query.get('next');
    ctx.navigate(next && next.startsWith('/ui/') ? next : '/ui/', { replace: true });
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    signIn({ token: token.value.trim() });
  });
  const code = ctx.query.get('code');
  if (code) await signIn({ code });
}
