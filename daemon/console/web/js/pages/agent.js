// Agent: the context files as bars against the per-file and total
// budgets, the prompt preview for a user, session kind and channel (the
// API's answer byte for byte, cuts and the stable prefix marked), and what
// a deploy changed in each session kind's prompt.

import { agentPath, get, post } from '../api.js';
import { h, clear, chars, tokens, bytes, num, percent, short, time, badge, field, loading } from '../dom.js';
import { unified, textDiff } from '../diff.js';
import { agentHeader, bar, budgetClass, errorBox } from './common.js';

const CUT = new Set(['truncated', 'clamped', 'dropped']);

export async function render(ctx) {
  const agent = ctx.params[0];
  const budget = h('section', { 'aria-labelledby': 'budget-h' }, h('h2', { id: 'budget-h', text: 'Context files and budgets' }), loading('the budget report'));
  const preview = h('section', { 'aria-labelledby': 'preview-h' }, h('h2', { id: 'preview-h', text: 'Prompt preview' }));
  const deploys = h('section', { 'aria-labelledby': 'deploys-h' }, h('h2', { id: 'deploys-h', text: 'What a deploy changed' }));
  ctx.main.append(...agentHeader(agent, '', 'Agent'), budget, preview, deploys);
  previewForm(agent, preview, ctx.query, (report) => clear(budget, budget.firstChild, budgetReport(report)));
  deployDiff(agent, deploys);
}

/** budgetReport is a bar per context file and one for the total. */
export function budgetReport(r) {
  const per = r.budget?.per_file || 0;
  const total = r.budget?.total || 0;
  const rows = (r.files || []).filter((f) => f.status !== 'missing').map((f) => {
    const cut = CUT.has(f.status);
    const cls = budgetClass(f.original_chars, per, cut);
    const words = `${chars(f.original_chars)} of a ${chars(per)} budget (${percent(f.original_chars, per)}); ${chars(f.injected_chars)} injected`;
    return h('li', { class: 'bar-row', 'data-file': f.name, 'data-status': f.status },
      h('span', {}, h('code', { text: f.name }), f.user ? h('span', { class: 'muted', text: ` (user ${f.user})` }) : null),
      bar(f.original_chars, per, cls),
      h('span', { class: 'bar-label' }, statusBadge(f.status), ' ', words, f.note ? h('span', { class: 'muted', text: ` — ${f.note}` }) : null));
  });
  const tcls = budgetClass(r.injected_chars, total, (r.files || []).some((f) => f.status === 'clamped' || f.status === 'dropped'));
  return h('div', {},
    h('p', {}, `Report for ${r.user ? `user ${r.user}` : 'no user'}, ${r.session} session, ${r.channel === 'dm' ? 'private chat' : 'group chat'}. `,
      `Per file: ${chars(per)}; total: ${chars(total)}; policy: ${r.policy}.`),
    h('ul', { class: 'bars', 'aria-label': 'Context files against the per-file budget' }, rows,
      h('li', { class: 'bar-row', 'data-file': '(total)' }, h('strong', { text: 'Total' }), bar(r.injected_chars, total, tcls),
        h('span', { class: 'bar-label', text: `${chars(r.injected_chars)} of ${chars(total)} (${percent(r.injected_chars, total)}); ${chars(r.remaining_chars)} left` }))),
    (r.problems || []).length ? h('div', { class: 'alert warn', role: 'status' }, h('strong', { text: 'Problems' }),
      h('ul', {}, r.problems.map((p) => h('li', { text: `${p.path || ''}${p.line ? `:${p.line}` : ''} ${p.message || p.msg || JSON.stringify(p)}` })))) : null);
}

function statusBadge(status) {
  const kind = CUT.has(status) ? 'bad' : status === 'full' ? 'ok' : 'info';
  const words = { full: 'whole', truncated: 'cut', clamped: 'cut (total)', dropped: 'dropped', empty: 'empty', missing: 'missing' };
  return badge(kind, words[status] || status);
}

function previewForm(agent, section, q, onReport) {
  const user = h('input', { name: 'user', type: 'text', autocomplete: 'off', value: q.get('user') || '', placeholder: 'no user' });
  const session = h('select', { name: 'session' }, ['main', 'subagent', 'cron'].map((s) => h('option', { value: s, text: s })));
  const channel = h('select', { name: 'channel' }, h('option', { value: 'dm', text: 'private (dm)' }), h('option', { value: 'group', text: 'group' }));
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'row', 'aria-label': 'Prompt preview' },
    field('User', user), field('Session kind', session), field('Channel', channel),
    h('button', { type: 'submit', text: 'Preview the prompt' }));
  const run = async () => {
    clear(out, loading('the prompt'));
    const body = { session: session.value, channel: channel.value };
    if (user.value.trim()) body.user = user.value.trim();
    try {
      const res = await post(agentPath(agent, '/prompt'), body);
      clear(out, promptView(res));
      onReport(res.report);
    } catch (err) {
      clear(out, errorBox('The prompt could not be assembled.', err));
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    run();
  });
  section.append(form, out);
  run();
}

/** promptView shows the prompt exactly as served: its text is the
 * concatenation of the spans, with the stable prefix and every cut marker
 * marked. */
export function promptView(res) {
  const r = res.report || {};
  const text = res.prompt || '';
  const prefix = new TextDecoder().decode(new TextEncoder().encode(text).slice(0, r.stable_prefix_bytes || 0));
  const cuts = [];
  const re = /\n?\[\.\.\.truncated, read [^\n]*? for full content\.\.\.\]\n\([^\n]*?: kept [^\n]*? chars\)\n/g;
  for (let m; (m = re.exec(text));) cuts.push([m.index, m.index + m[0].length]);
  const marks = [0, text.length, prefix.length, ...cuts.flat()].filter((x) => x <= text.length);
  const cuts0 = [...new Set(marks)].sort((a, b) => a - b);
  const pre = h('pre', { class: 'prompt', tabindex: '0', 'aria-label': 'The assembled prompt', 'data-testid': 'prompt' });
  for (let i = 0; i + 1 < cuts0.length; i++) {
    const [a, b] = [cuts0[i], cuts0[i + 1]];
    const inCut = cuts.some(([s, e]) => a >= s && b <= e);
    const cls = [a < prefix.length ? 'stable' : '', inCut ? 'cut' : ''].filter(Boolean).join(' ');
    const seg = text.slice(a, b);
    pre.append(inCut ? h('mark', { class: cls, text: seg }) : cls ? h('span', { class: cls, text: seg }) : seg);
  }
  const cutFiles = (r.files || []).filter((f) => CUT.has(f.status));
  return h('div', {},
    h('dl', { class: 'meta' },
      h('div', {}, h('dt', { text: 'Size' }), h('dd', { text: `${bytes(r.prompt_bytes)} · ${chars(r.prompt_chars)} · ${tokens(r.prompt_tokens || r.injected_tokens)} (${r.tokenizer})` })),
      h('div', {}, h('dt', { text: 'Stable prefix' }), h('dd', { text: `${num(r.stable_prefix_bytes)} bytes (cacheable by the model provider)` })),
      h('div', {}, h('dt', { text: 'Commit' }), h('dd', {}, h('code', { text: short(res.commit) })))),
    cutFiles.length
      ? h('div', { class: 'alert warn', role: 'status', 'data-testid': 'cuts' }, h('strong', { text: `${cutFiles.length} ${cutFiles.length === 1 ? 'file was' : 'files were'} cut:` }),
        h('ul', {}, cutFiles.map((f) => h('li', {}, h('code', { text: f.name }), ` ${f.status}: `, f.note || '',
          (f.dropped || []).map((d) => ` (lines ${d.start.line}–${d.end.column === 1 && d.end.line > d.start.line ? d.end.line - 1 : d.end.line} left out)`)))))
      : h('p', { class: 'muted', text: 'Nothing was cut.' }),
    h('p', { class: 'legend' }, h('span', {}, h('span', { class: 'swatch stable' }), 'stable prefix'), h('span', {}, h('span', { class: 'swatch cut' }), 'where a file was cut')),
    pre);
}

async function deployDiff(agent, section) {
  const out = h('div', { 'aria-live': 'polite' });
  let list;
  try {
    list = await get(agentPath(agent, '/deploys'));
  } catch (err) {
    section.append(errorBox('The deploys could not be listed.', err));
    return;
  }
  list = Array.isArray(list) ? list : list?.deploys || [];
  if (list.length < 2) {
    section.append(h('p', { class: 'muted', text: list.length ? 'Only one deploy so far: nothing to compare.' : 'No deploy recorded.' }));
    return;
  }
  const opt = (d) => h('option', { value: d.commit, text: `${short(d.commit)} — ${d.subject || ''} (${new Date(d.time).toLocaleString()})` });
  const from = h('select', { name: 'from' }, list.map(opt));
  const to = h('select', { name: 'to' }, list.map(opt));
  from.selectedIndex = 1;
  to.selectedIndex = 0;
  const form = h('form', { class: 'row', 'aria-label': 'Compare two deploys' }, field('Before', from), field('After', to),
    h('button', { type: 'submit', text: 'Compare prompts' }));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(out, loading('both prompts'));
    try {
      const res = await post(agentPath(agent, '/prompt/diff'), { from: from.value, to: to.value });
      clear(out, (res.kinds || []).map((k) => h('section', {},
        h('h3', { text: `Session kind ${k.kind}` }),
        k.diff !== undefined ? unified(k.diff, `Prompt of ${k.kind} sessions, before and after`) : textDiff(k.before || '', k.after || '', `Prompt of ${k.kind} sessions`))));
    } catch (err) {
      clear(out, errorBox('The prompts could not be compared.', err));
    }
  });
  section.append(h('p', {}, `${list.length} deploys; the newest was `, time(list[0].time), '.'), form, out);
}
