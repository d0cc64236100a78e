// What the agent pages share: the heading and the tabs between them.

import { h } from '../dom.js';

const tabs = [
  ['', 'Prompt'],
  ['/memory', 'Memory'],
  ['/proposals', 'Proposals'],
  ['/edit', 'Edit'],
  ['/skills', 'Skills'],
];

/** agentHeader is the h1 "title: agent" and the tabs, current marked. */
export function agentHeader(agent, current, title) {
  const base = `/ui/agents/${encodeURIComponent(agent)}`;
  return [
    h('p', { class: 'muted' }, h('a', { href: '/ui/', text: 'Overview' }), ' › ', h('span', { text: `agent ${agent}` })),
    h('h1', { text: `${title}: ${agent}` }),
    h('nav', { 'aria-label': `Agent ${agent}` },
      h('ul', { class: 'tabs' }, tabs.map(([suffix, label]) => h('li', {},
        h('a', { href: base + suffix, text: label, 'aria-current': suffix === current ? 'page' : null }))))),
  ];
}

/** budgetClass is the colour of a use against a limit: bad when cut or
 * dropped (or over), warn from 80 %, else none. */
export function budgetClass(used, limit, cut) {
  if (cut || (limit > 0 && used > limit)) return 'bad';
  if (limit > 0 && used >= 0.8 * limit) return 'warn';
  return '';
}

/** bar is a horizontal bar of used against limit; the words beside it say
 * the same for screen readers (the bar itself is hidden from them). */
export function bar(used, limit, cls) {
  const pct = limit > 0 ? Math.min(100, (100 * used) / limit) : 0;
  const fill = h('span');
  fill.style.width = `${pct.toFixed(1)}%`;
  return h('div', { class: `bar ${cls}`, 'aria-hidden': 'true' }, fill);
}

/** errorBox shows an API error with its code. */
export function errorBox(title, err) {
  return h('div', { class: 'alert', role: 'alert' },
    h('strong', { text: title }), ' ', h('span', { text: err.message }), err.code ? h('span', { class: 'muted', text: ` (${err.code})` }) : null);
}
