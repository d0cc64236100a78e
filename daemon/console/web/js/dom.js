// DOM helpers: elements are built with h(), never from HTML strings, so
// nothing an agent or a user wrote can become markup.

/** h makes an element: attrs sets attributes (on* are listeners, class and
 * text are shortcuts); children are nodes, strings or arrays of them. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** clear empties el and appends children. */
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const nf = new Intl.NumberFormat(undefined);

/** num formats an integer for the viewer's locale. */
export const num = (n) => nf.format(Number(n) || 0);

/** chars is a count of chars (Unicode code points) with its unit. */
export const chars = (n) => `${num(n)} ${Number(n) === 1 ? 'char' : 'chars'}`;
export const tokens = (n) => `${num(n)} ${Number(n) === 1 ? 'token' : 'tokens'}`;
export const bytes = (n) => {
  n = Number(n) || 0;
  if (n < 1024) return `${num(n)} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
};
export const percent = (part, whole) => (whole > 0 ? `${Math.round((100 * part) / whole)} %` : '–');

const tf = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });

/** time formats an RFC 3339 time in the viewer's time zone, inside a
 * <time> element that keeps the exact value. */
export function time(iso) {
  if (!iso) return h('span', { class: 'muted', text: 'never' });
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h('span', { text: iso });
  return h('time', { datetime: iso, title: d.toISOString(), text: tf.format(d) });
}

/** duration says how long a number of seconds is, in words. */
export function duration(s) {
  s = Math.round(Number(s) || 0);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  const hours = Math.floor(s / 3600);
  if (hours < 48) return `${hours} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(hours / 24)} days`;
}

/** short is the first 12 characters of a commit ID (worktree: kept). */
export function short(commit) {
  if (!commit) return '';
  const m = /^(worktree:)?(.*)$/.exec(commit);
  return (m[1] || '') + m[2].slice(0, 12);
}

/** badge is a status label; kind is ok, warn, bad or info. */
export const badge = (kind, text) => h('span', { class: `badge ${kind}`, text });

/** alert is a message box; role alert for errors so screen readers say it. */
export function alert(kind, title, detail) {
  return h('div', { class: `alert ${kind === 'bad' ? '' : kind}`, role: kind === 'bad' ? 'alert' : 'status' },
    h('strong', { text: title }), detail ? h('pre', { text: detail }) : null);
}

/** announce says text to screen readers through the live region. */
export function announce(text) {
  const live = document.getElementById('live');
  if (live) live.textContent = text;
}

/** codePoints counts chars the way budgets do: Unicode code points. */
export function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** field is a labelled form control. */
export function field(label, control, hint) {
  return h('label', {}, label, control, hint ? h('span', { class: 'muted', text: hint }) : null);
}

/** loading is a placeholder while something loads. */
export const loading = (what) => h('p', { class: 'muted', role: 'status', text: `Loading ${what}…` });
