// Overview: every agent the session may see with its deployed commit,
// index state and lag, budget use and warnings; the sources and their
// health; and what happens (deploys, agent writes, proposals), live.

import { get } from '../api.js';
import { h, clear, chars, tokens, percent, time, duration, short, badge, loading } from '../dom.js';
import { onEvent, onState } from '../events.js';
import { bar, budgetClass, errorBox } from './common.js';

export async function render(ctx) {
  const { main } = ctx;
  const body = h('div', {}, loading('the overview'));
  main.append(h('h1', { text: 'Overview' }), body);
  let data;
  try {
    data = await get('/ui/api/overview');
  } catch (err) {
    clear(body, errorBox('The overview could not be loaded.', err));
    return;
  }
  const feed = h('ol', { class: 'feed', 'aria-label': 'Recent activity, newest first' });
  const stream = h('span', { class: 'muted' });
  clear(body,
    h('section', { 'aria-labelledby': 'agents-h' }, h('h2', { id: 'agents-h', text: `Agents (${(data.agents || []).length})` }), agentsTable(data.agents || [])),
    h('div', { class: 'grid' },
      h('section', { 'aria-labelledby': 'sources-h', class: 'card' }, h('h2', { id: 'sources-h', text: 'Sources' }), sourcesTable(data.sources || [])),
      h('section', { 'aria-labelledby': 'recent-h', class: 'card' },
        h('h2', { id: 'recent-h', text: 'Recent activity' }), h('p', {}, stream), feed)));
  for (const ev of (data.recent || []).slice().reverse()) addEvent(feed, ev, false);
  if (!feed.children.length) feed.append(h('li', { class: 'muted empty', text: 'Nothing has happened since the daemon started.' }));
  ctx.onCleanup(onState((s) => {
    stream.textContent = { live: 'Live: new events appear at the top.', lost: 'The live stream was lost; reconnecting…', connecting: 'Connecting to the live stream…' }[s];
  }));
  ctx.onCleanup(onEvent((ev) => addEvent(feed, ev, true)));
}

function agentsTable(agents) {
  if (!agents.length) return h('p', { class: 'muted', text: 'No agent is deployed that this session may see.' });
  const rows = agents.map((a) => {
    const b = a.budget || {};
    const largest = b.largest || {};
    const size = b.unit === 'tokens' ? tokens : chars;
    // The numbers of `quire prompt --report`: what the context files put
    // in the prompt against the total budget; red when a file is cut or
    // dropped, amber from 80 %.
    const cut = b.cut || [];
    const dropped = b.dropped || [];
    const cls = budgetClass(b.injected || 0, b.total || 0, cut.length + dropped.length > 0);
    const lcut = largest.status === 'truncated' || largest.status === 'clamped' || largest.status === 'dropped';
    const lcls = budgetClass(largest.size || 0, largest.limit || 0, lcut);
    const idx = a.index || {};
    const lag = Number(idx.lag ?? a.lag_seconds ?? 0);
    const losses = [cut.length ? `cut: ${cut.join(', ')}` : '', dropped.length ? `dropped: ${dropped.join(', ')}` : ''].filter(Boolean);
    return h('tr', {},
      h('th', { scope: 'row' }, h('a', { href: `/ui/agents/${encodeURIComponent(a.name)}`, text: a.name })),
      h('td', {}, h('code', { text: short(a.commit || a.deployed_commit) || 'not deployed' }), h('br'), time(a.deployed_at)),
      h('td', {}, indexState(idx.state, lag)),
      h('td', { 'data-testid': 'budget-total' }, bar(b.injected || 0, b.total || 0, cls),
        h('span', { class: 'bar-label', text: `${size(b.injected)} of ${size(b.total)} in the prompt (${percent(b.injected, b.total)})` }),
        losses.length ? h('div', { class: 'bar-label', text: losses.join('; ') }) : null),
      h('td', {}, largest.file
        ? [bar(largest.size || 0, largest.limit || 0, lcls), h('span', { class: 'bar-label', text: `${largest.file}: ${size(largest.size)} of ${size(largest.limit)} per file${lcut ? ` (${largest.status}: ${size(largest.injected)} in the prompt)` : ''}` })]
        : h('span', { class: 'muted', text: 'none' })),
      h('td', { class: 'num' }, a.open_proposals
        ? h('a', { href: `/ui/agents/${encodeURIComponent(a.name)}/proposals`, text: `${a.open_proposals} open`, 'aria-label': `${a.open_proposals} open proposals of ${a.name}` })
        : h('span', { class: 'muted', text: 'none' })),
      h('td', {}, (a.warnings || []).length
        ? h('ul', {}, a.warnings.map((w) => h('li', { text: typeof w === 'string' ? w : w.message || JSON.stringify(w) })))
        : h('span', { class: 'muted', text: 'none' })));
  });
  return h('div', { class: 'table-wrap', role: 'region', tabindex: '0', 'aria-label': 'Deployed agents' }, h('table', {},
    h('caption', { class: 'visually-hidden', text: 'Deployed agents' }),
    h('thead', {}, h('tr', {}, ['Agent', 'Deployed commit', 'Index', 'Context in the prompt (total budget)', 'Largest file', 'Proposals', 'Warnings'].map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, rows)));
}

function indexState(state, lag) {
  if (state === 'error' || state === 'failed') return badge('bad', `index ${state}`);
  if (lag > 0) return [badge('warn', state || 'behind'), ` ${duration(lag)} behind`];
  return badge('ok', state || 'current');
}

function sourcesTable(sources) {
  if (!sources.length) return h('p', { class: 'muted', text: 'No source.' });
  return h('div', { class: 'table-wrap', role: 'region', tabindex: '0', 'aria-label': 'Sources and their health' }, h('table', {},
    h('caption', { class: 'visually-hidden', text: 'Sources and their health' }),
    h('thead', {}, h('tr', {}, ['Source', 'Health', 'Lag'].map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, sources.map((s) => h('tr', {},
      h('th', { scope: 'row' }, h('code', { text: s.name })),
      h('td', {}, badge(s.error ? 'bad' : s.state === 'ok' || s.state === 'healthy' ? 'ok' : 'warn', s.state || (s.error ? 'failing' : 'ok')),
        s.error ? h('div', { text: s.error }) : null),
      h('td', { class: 'num', text: s.lag ? duration(s.lag) : '0 s' }))))));
}

const kinds = { deploy: 'info', write: 'ok', proposal: 'warn', error: 'bad', index: 'info', prune: 'info' };

/** describe says what an event means, in words. */
export function describe(ev) {
  const who = ev.user ? ` for ${ev.user}` : '';
  switch (ev.type) {
    case 'deploy': return `${ev.agent || ev.source} deployed ${short(ev.commit)}`;
    case 'write':
      if ((ev.message || '').startsWith('proposed')) return `${ev.agent} ${ev.message}: a change to ${ev.path || 'a persona file'}${who}`;
      return `${ev.agent} wrote ${ev.path || 'a file'}${who}`;
    case 'proposal': return `${ev.agent}: ${ev.message || 'a proposal changed'}`;
    case 'index': return `${ev.agent} indexed: ${ev.message || ''}`;
    case 'prune': return `${ev.agent} pruned old daily logs: ${ev.message || ''}`;
    case 'error': return `${ev.agent || ev.source || 'daemon'}: ${ev.message || 'error'}`;
    default: return `${ev.type}: ${ev.message || ''}`;
  }
}

function addEvent(feed, ev, live) {
  feed.querySelector('.empty')?.remove();
  const li = h('li', { 'data-type': ev.type || '', 'data-agent': ev.agent || '' },
    h('div', { class: 'meta' }, badge(kinds[ev.type] || 'info', ev.type || 'event'), time(ev.time), live ? h('span', { text: 'live' }) : null),
    h('div', { text: describe(ev) }));
  const proposed = (ev.message || '').startsWith('proposed') || ev.type === 'proposal';
  if (ev.agent && (ev.type === 'write' || ev.type === 'proposal')) {
    const where = proposed ? 'proposals' : 'memory';
    li.append(h('a', { href: `/ui/agents/${encodeURIComponent(ev.agent)}/${where}`, text: proposed ? `Proposals of ${ev.agent}` : `Writes of ${ev.agent}` }));
  }
  feed.prepend(li);
  while (feed.children.length > 50) feed.lastElementChild.remove();
}
