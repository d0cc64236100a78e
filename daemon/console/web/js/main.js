// The console's shell: the session, the top bar and the router. Pages are
// modules under pages/ exporting render(ctx); a page's cleanups (live
// subscriptions) run when another page is shown.

import { get, post, setCSRF } from './api.js';
import { h, clear, announce } from './dom.js';
import * as overview from './pages/overview.js';
import * as agent from './pages/agent.js';
import * as memory from './pages/memory.js';
import * as proposals from './pages/proposals.js';
import * as edit from './pages/edit.js';
import * as skills from './pages/skills.js';
import * as signin from './pages/signin.js';

const routes = [
  [/^\/ui\/?$/, overview],
  [/^\/ui\/signin\/?$/, signin],
  [/^\/ui\/agents\/([^/]+)\/?$/, agent],
  [/^\/ui\/agents\/([^/]+)\/memory\/?$/, memory],
  [/^\/ui\/agents\/([^/]+)\/proposals\/?$/, proposals],
  [/^\/ui\/agents\/([^/]+)\/edit\/?$/, edit],
  [/^\/ui\/agents\/([^/]+)\/skills\/?$/, skills],
];

let session = null;
let cleanups = [];
let guard = null; // a page's "leave with unsaved changes?" check

/** navigate shows the page at url (a path under /ui/). */
export function navigate(url, { replace = false } = {}) {
  if (guard && !guard()) return;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  show();
}

async function loadSession() {
  try {
    session = await get('/ui/api/session');
    setCSRF(session.csrf);
  } catch {
    session = null;
  }
}

function renderWho() {
  const who = document.getElementById('who');
  if (!session) return clear(who);
  const name = session.name || 'Signed in';
  clear(who,
    h('span', {}, 'Signed in as ', h('strong', { text: name }), session.email ? ` <${session.email}>` : ''),
    h('button', { type: 'button', class: 'secondary', onclick: signOut, text: 'Sign out' }));
}

function renderNav(path) {
  const nav = document.getElementById('nav');
  const link = (href, text) => h('li', {}, h('a', { href, text, 'aria-current': path === href ? 'page' : null }));
  clear(nav, session ? h('ul', {}, link('/ui/', 'Overview')) : null);
}

async function signOut() {
  try {
    await post('/ui/api/logout');
  } catch {
    // the cookie is gone either way once the session is
  }
  session = null;
  navigate('/ui/signin');
}

async function show() {
  for (const fn of cleanups) fn();
  cleanups = [];
  guard = null;
  const path = location.pathname;
  const main = document.getElementById('main');
  let page = null;
  let params = [];
  for (const [re, mod] of routes) {
    const m = re.exec(path);
    if (m) {
      page = mod;
      params = m.slice(1).map(decodeURIComponent);
      break;
    }
  }
  if (!session && page !== signin) await loadSession();
  if (!session && page !== signin) {
    history.replaceState(null, '', `/ui/signin${location.search}`);
    page = signin;
    params = [];
  }
  renderWho();
  renderNav(path);
  if (!page) {
    clear(main, h('h1', { text: 'Not found' }), h('p', {}, 'No page here. ', h('a', { href: '/ui/', text: 'Go to the overview' })));
    return focusHeading(main);
  }
  const ctx = {
    main,
    params,
    query: new URLSearchParams(location.search),
    session,
    navigate,
    onCleanup: (fn) => cleanups.push(fn),
    setGuard: (fn) => {
      guard = fn;
    },
    signedIn: async () => {
      await loadSession();
      return session;
    },
  };
  clear(main);
  try {
    await page.render(ctx);
  } catch (err) {
    main.append(h('div', { class: 'alert', role: 'alert' }, h('strong', { text: 'This page could not be shown. ' }), err.message));
  }
  focusHeading(main);
}

function focusHeading(main) {
  const h1 = main.querySelector('h1');
  document.title = h1 ? `${h1.textContent} · Quire console` : 'Quire console';
  if (h1) {
    h1.setAttribute('tabindex', '-1');
    h1.focus({ preventScroll: true });
  }
  announce(document.title);
}

// Same-origin links under /ui/ are handled here, without a reload.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[href]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || url.pathname.startsWith('/ui/login')) return;
  if (a.getAttribute('href').startsWith('#')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener('popstate', show);
window.addEventListener('beforeunload', (e) => {
  if (guard && !guard(true)) e.preventDefault();
});
window.addEventListener('quire:signedout', () => {
  if (session && location.pathname !== '/ui/signin') {
    session = null;
    navigate('/ui/signin', { replace: true });
  }
});

show();
