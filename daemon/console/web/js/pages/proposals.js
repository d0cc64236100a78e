// Proposals: each open persona proposal of the agent as a diff against
// main, with approve (a merge into main authored by the signed-in person,
// validated like a push) and reject (the branch closed, the decision kept
// in git). A refusal's messages are shown as the daemon gives them.

import { agentPath, get, post } from '../api.js';
import { h, clear, time, short, badge, loading } from '../dom.js';
import { unified } from '../diff.js';
import { onEvent } from '../events.js';
import { agentHeader, errorBox } from './common.js';

export async function render(ctx) {
  const agent = ctx.params[0];
  const list = h('div', {}, loading('the proposals'));
  const status = h('div', { 'aria-live': 'polite' });
  ctx.main.append(...agentHeader(agent, '/proposals', 'Proposals'), status, list);
  const load = async () => {
    try {
      const res = await get(agentPath(agent, '/proposals'));
      const items = Array.isArray(res) ? res : res?.proposals || [];
      clear(list, items.length
        ? [h('p', { text: `${items.length} open ${items.length === 1 ? 'proposal' : 'proposals'}.` }), h('ul', { class: 'proposals' }, items.map((p) => item(agent, p, status, load)))]
        : h('p', { class: 'muted', text: 'No open proposal.' }));
    } catch (err) {
      clear(list, errorBox('The proposals could not be loaded.', err));
    }
  };
  await load();
  ctx.onCleanup(onEvent((ev) => {
    if (ev.agent === agent && (ev.type === 'proposal' || (ev.type === 'write' && (ev.message || '').startsWith('proposed')))) load();
  }));
}

function item(agent, p, status, reload) {
  const id = String(p.id);
  const hid = `proposal-${id.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const approve = h('button', { type: 'button', text: 'Approve and merge into main', 'aria-describedby': hid });
  const reject = h('button', { type: 'button', class: 'danger', text: 'Reject', 'aria-describedby': hid });
  const out = h('div', { 'aria-live': 'assertive' });
  const act = async (verb) => {
    approve.disabled = true;
    reject.disabled = true;
    clear(out);
    try {
      const res = await post(agentPath(agent, `/proposals/${encodeURIComponent(id)}/${verb}`));
      const msg = verb === 'approve' ? `Proposal ${id} approved: merged into main as ${short(res?.commit)}.` : `Proposal ${id} rejected: its branch is closed.`;
      clear(status, h('div', { class: 'alert ok', role: 'status', text: msg }));
      await reload();
    } catch (err) {
      const problems = err.body?.error?.problems || err.body?.problems || [];
      clear(out, h('div', { class: 'alert', role: 'alert', 'data-testid': 'refusal' },
        h('strong', { text: verb === 'approve' ? 'The merge was refused: ' : 'The rejection failed: ' }), h('span', { text: err.message }),
        problems.length ? h('ul', {}, problems.map((x) => h('li', { text: typeof x === 'string' ? x : `${x.path || ''}${x.line ? `:${x.line}` : ''} ${x.message || ''}` }))) : null));
      approve.disabled = false;
      reject.disabled = false;
    }
  };
  approve.addEventListener('click', () => act('approve'));
  reject.addEventListener('click', () => act('reject'));
  return h('li', { 'data-proposal': id },
    h('h2', { id: hid, text: `Proposal ${id}: ${(p.message || '').split('\n')[0] || p.branch}` }),
    h('div', { class: 'meta' }, h('code', { text: p.branch || '' }), h('span', { text: `by ${p.author || 'the agent'}` }), time(p.created),
      (p.files || []).map((f) => badge('info', f))),
    unified(p.diff || '', `Changes of proposal ${id} against main`),
    h('div', { class: 'row' }, approve, reject), out);
}
