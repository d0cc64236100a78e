// Diffs: unified diffs from git shown line by line, and a line diff of two
// texts (a stale save's two versions, a prompt before and after).

import { h } from './dom.js';

/** unified renders git's unified diff text; label names it for screen
 * readers. Added and removed lines also say so in words (+/−). */
export function unified(text, label) {
  const box = h('div', { class: 'diff', role: 'region', 'aria-label': label || 'Diff', tabindex: '0' });
  if (!text) {
    box.append(h('div', { class: 'muted', text: 'No change.' }));
    return box;
  }
  for (const line of text.replace(/\n$/, '').split('\n')) box.append(lineEl(line));
  return box;
}

function lineEl(line) {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) {
    return h('div', { class: 'file', text: line });
  }
  if (line.startsWith('@@')) return h('div', { class: 'hunk', text: line });
  if (line.startsWith('+')) return h('div', { class: 'add' }, h('span', { class: 'visually-hidden', text: 'added: ' }), line);
  if (line.startsWith('-')) return h('div', { class: 'del' }, h('span', { class: 'visually-hidden', text: 'removed: ' }), line);
  return h('div', { text: line });
}

/** lineDiff compares two texts line by line (longest common subsequence)
 * and returns unified-style lines: ' ', '-' or '+' then the line. */
export function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > 16e6) return [...x.map((l) => `-${l}`), ...y.map((l) => `+${l}`)];
  const n = x.length;
  const m = y.length;
  const w = m + 1;
  const L = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * w + j] = x[i] === y[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push(` ${x[i]}`);
      i++;
      j++;
    } else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) out.push(`-${x[i++]}`);
    else out.push(`+${y[j++]}`);
  }
  while (i < n) out.push(`-${x[i++]}`);
  while (j < m) out.push(`+${y[j++]}`);
  return out;
}

/** textDiff renders lineDiff(a, b), unchanged runs of more than 6 lines
 * folded to their first and last 3. */
export function textDiff(a, b, label) {
  const lines = lineDiff(a, b);
  if (!lines.some((l) => l[0] !== ' ')) return unified('', label);
  const shown = [];
  let run = [];
  const flush = (end) => {
    const first = shown.length === 0;
    if (run.length <= 6) shown.push(...run);
    else {
      const head = first ? [] : run.slice(0, 3);
      const tail = end ? [] : run.slice(-3);
      shown.push(...head, `@@ ${run.length - head.length - tail.length} unchanged lines @@`, ...tail);
    }
    run = [];
  };
  for (const l of lines) {
    if (l[0] === ' ') run.push(l);
    else {
      flush(false);
      shown.push(l);
    }
  }
  flush(true);
  return unified(shown.join('\n'), label);
}
