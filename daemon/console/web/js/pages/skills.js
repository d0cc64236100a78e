// Skills: the agent's skills with their tier, source, what shadows them
// and whether the agent may use them; a search ranks them by a query.

import { agentPath, get, post } from '../api.js';
import { h, clear, badge, field, loading } from '../dom.js';
import { agentHeader, errorBox } from './common.js';

export async function render(ctx) {
  const agent = ctx.params[0];
  const table = h('div', {}, loading('the skills'));
  const text = h('input', { type: 'search', name: 'query', autocomplete: 'off' });
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'row', role: 'search', 'aria-label': 'Skill search' }, field('Find a skill for', text), h('button', { type: 'submit', text: 'Search' }));
  ctx.main.append(...agentHeader(agent, '/skills', 'Skills'),
    h('section', { 'aria-labelledby': 'search-h' }, h('h2', { id: 'search-h', text: 'Search' }), form, out),
    h('section', { 'aria-labelledby': 'all-h' }, h('h2', { id: 'all-h', text: 'All skills' }), table));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(out, loading('skills'));
    try {
      const res = await post(agentPath(agent, '/skills/search'), { query: text.value, limit: 10 });
      const found = res.skills || [];
      clear(out, found.length
        ? h('ol', {}, found.map((s) => h('li', {}, h('strong', { text: s.name }), ` (${s.tier}, score ${Number(s.score || 0).toFixed(2)}): `, s.description || '')))
        : h('p', { class: 'muted', text: 'No skill matches.' }));
    } catch (err) {
      clear(out, errorBox('The search failed.', err));
    }
  });
  try {
    const res = await get(agentPath(agent, '/skills?all=true'));
    clear(table, skillsTable(res.skills || []));
  } catch (err) {
    clear(table, errorBox('The skills could not be loaded.', err));
  }
}

function skillsTable(skills) {
  if (!skills.length) return h('p', { class: 'muted', text: 'This agent has no skill.' });
  return h('div', { class: 'table-wrap', role: 'region', tabindex: '0', 'aria-label': 'Skills of the agent' }, h('table', {},
    h('caption', { class: 'visually-hidden', text: 'Skills of the agent' }),
    h('thead', {}, h('tr', {}, ['Skill', 'Tier', 'Source', 'Shadowed by', 'May use', 'Description'].map((t) => h('th', { scope: 'col', text: t })))),
    h('tbody', {}, skills.map((s) => h('tr', { 'data-skill': s.name, 'data-shadowed': s.shadowed_by ? 'true' : null },
      h('th', { scope: 'row', text: s.name }),
      h('td', { text: s.tier || '' }),
      h('td', {}, h('code', { text: s.source || s.location || '' })),
      h('td', {}, s.shadowed_by ? h('code', { text: s.shadowed_by }) : '—'),
      h('td', {}, s.allowed === false ? badge('bad', 'no') : badge('ok', 'yes')),
      h('td', { text: s.description || '' }))))));
}
