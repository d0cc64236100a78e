// Memory: MEMORY.md and the daily logs (read-only here), a user's own
// memory, a search showing each hit's text and the text and vector parts
// of its score, and the agents' writes on live as a history of diffs,
// filterable by user and file, that grows as writes arrive.

import { agentPath, filePath, get, post, query, ApiError } from '../api.js';
import { h, clear, chars, bytes, codePoints, time, short, badge, field, loading } from '../dom.js';
import { unified } from '../diff.js';
import { onEvent } from '../events.js';
import { agentHeader, errorBox } from './common.js';

const DAYS = 7; // daily logs shown: today and the days before

export async function render(ctx) {
  const agent = ctx.params[0];
  const q = ctx.query;
  const files = h('section', { 'aria-labelledby': 'files-h' }, h('h2', { id: 'files-h', text: 'Memory files' }));
  const search = h('section', { 'aria-labelledby': 'search-h' }, h('h2', { id: 'search-h', text: 'Search memory' }));
  const hist = h('section', { 'aria-labelledby': 'history-h' }, h('h2', { id: 'history-h', text: 'What the agent wrote (live)' }));
  ctx.main.append(...agentHeader(agent, '/memory', 'Memory'), files, search, hist);
  memoryFiles(agent, files, q.get('user') || '');
  searchBox(agent, search, q.get('user') || '');
  history(ctx, agent, hist, q.get('user') || '', q.get('file') || '');
}

function memoryFiles(agent, section, initialUser) {
  const user = h('input', { type: 'text', name: 'user', autocomplete: 'off', value: initialUser, placeholder: 'the agent’s own' });
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'row', 'aria-label': 'Whose memory' }, field('User', user, 'empty: the agent’s own memory'), h('button', { type: 'submit', text: 'Show memory' }));
  const load = async () => {
    clear(out, loading('memory'));
    const u = user.value.trim();
    const parts = [];
    parts.push(await fileBlock(agent, 'MEMORY.md', u, true));
    const logs = await dailyLogs(agent, u);
    parts.push(h('h3', { text: 'Daily logs (read-only)' }));
    parts.push(h('p', { class: 'muted', 'data-testid': 'logs-note', text: logs.note }));
    if (logs.blocks.length) parts.push(logs.blocks);
    clear(out, parts);
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    load();
  });
  section.append(form, out);
  load();
}

async function readFile(agent, path, user) {
  try {
    return await get(agentPath(agent, `/files/${filePath(path)}${query({ user })}`));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

async function fileBlock(agent, path, user, editable) {
  const title = `${user ? `users/${user}/` : ''}${path}`;
  let f;
  try {
    f = await readFile(agent, path, user);
  } catch (err) {
    return errorBox(`${title} could not be read.`, err);
  }
  const edit = editable
    ? h('a', { href: `/ui/agents/${encodeURIComponent(agent)}/edit${query({ path, user })}`, text: `Edit ${path}` })
    : badge('info', 'read-only');
  if (!f) return h('div', { class: 'card' }, h('h3', { text: title }), h('p', { class: 'muted', text: 'No such file yet.' }), editable ? edit : null);
  return h('div', { class: 'card' }, h('h3', { text: title }),
    h('p', { class: 'meta' }, h('span', { text: chars(codePoints(f.content)) }), h('span', {}, 'commit ', h('code', { text: short(f.commit) })), edit),
    h('pre', { class: 'prompt', tabindex: '0', 'aria-label': title, text: f.content }));
}

const LOG = /memory\/\d{4}-\d{2}-\d{2}\.md$/;

/** dailyLogs lists the daily logs of the agent (or of user), newest
 * first, each opened on demand: from the files list
 * (GET /v1/agents/{agent}/files) where the daemon has it, else by trying
 * the last DAYS days one by one — and the note says which. */
async function dailyLogs(agent, user) {
  let listed = null;
  try {
    const res = await get(agentPath(agent, `/files${query({ user })}`));
    if (res && Array.isArray(res.files)) listed = res.files.filter((f) => f.kind === 'daily_log' || LOG.test(f.path));
  } catch { /* a daemon without the files list: try the days */ }
  if (listed) {
    const logs = listed.map((f) => ({ path: f.path.match(LOG)[0], size: f.size })).sort((a, b) => (a.path < b.path ? 1 : -1));
    return {
      note: ['No daily log yet.', 'One daily log; open it to read it.'][logs.length] ?? `All ${logs.length} daily logs, newest first; open one to read it.`,
      blocks: logs.map((l) => logBlock(agent, user, l.path, bytes(l.size))),
    };
  }
  const days = [];
  const now = Date.now();
  for (let i = -1; i < DAYS; i++) days.push(new Date(now - i * 86400e3).toISOString().slice(0, 10));
  const found = await Promise.all([...new Set(days)].map(async (d) => {
    const f = await readFile(agent, `memory/${d}.md`, user).catch(() => null);
    return f ? logBlock(agent, user, `memory/${d}.md`, chars(codePoints(f.content)), f.content) : null;
  }));
  const blocks = found.filter(Boolean);
  return {
    note: `Only the last ${DAYS} days are shown (${days[days.length - 1]} to ${days[0]}, tomorrow in UTC included): this daemon does not list files, so older logs are not looked for.${blocks.length ? '' : ' None was found in these days.'}`,
    blocks,
  };
}

/** logBlock is a daily log, read when first opened (content: already read). */
function logBlock(agent, user, path, size, content) {
  const pre = h('pre', { tabindex: '0', 'aria-label': path, text: content ?? '' });
  const block = h('details', { class: 'card' }, h('summary', {}, h('code', { text: path }), ` · ${size}`), pre);
  let loaded = content !== undefined;
  block.addEventListener('toggle', async () => {
    if (!block.open || loaded) return;
    loaded = true;
    pre.textContent = 'Loading…';
    try {
      const f = await readFile(agent, path, user);
      pre.textContent = f ? f.content : 'This log is gone (pruned or deleted since the list was read).';
    } catch (err) {
      loaded = false;
      pre.textContent = `It could not be read: ${err.message}`;
    }
  });
  return block;
}

function searchBox(agent, section, initialUser) {
  const text = h('input', { type: 'search', name: 'query', autocomplete: 'off', required: true });
  const user = h('input', { type: 'text', name: 'user', autocomplete: 'off', value: initialUser });
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'row', role: 'search', 'aria-label': 'Memory search' }, field('Search for', text), field('As user (optional)', user), h('button', { type: 'submit', text: 'Search' }));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(out, loading('hits'));
    const body = { query: text.value };
    if (user.value.trim()) body.user = user.value.trim();
    try {
      const res = await post(agentPath(agent, '/memory/search'), body);
      const hits = res.hits || [];
      clear(out, h('p', { text: `${hits.length} ${hits.length === 1 ? 'hit' : 'hits'} from commit ${short(res.commit)}.` }),
        h('ol', { class: 'hits' }, hits.map(hitItem)));
    } catch (err) {
      clear(out, errorBox('The search failed.', err));
    }
  });
  section.append(form, out);
}

const score = (x) => Number(x || 0).toFixed(3);

/** hitItem shows a hit with its score and the parts of it the full-text
 * and the vector side contributed (they sum to the score). */
function hitItem(hit) {
  const parts = `score ${score(hit.score)} = text ${score(hit.text_score)} + vector ${score(hit.vector_score)}`;
  return h('li', {},
    h('div', { class: 'meta' }, h('code', { text: `${hit.user ? `users/${hit.user}/` : ''}${hit.path}:${hit.start_line}–${hit.end_line}` }),
      badge(hit.scope === 'user' ? 'info' : 'ok', hit.scope === 'user' ? `user ${hit.user}` : 'agent'),
      h('span', { class: 'score', 'data-testid': 'score', text: parts })),
    h('pre', { text: hit.text }));
}

function history(ctx, agent, section, initialUser, initialFile) {
  const user = h('input', { type: 'text', name: 'user', autocomplete: 'off', value: initialUser });
  const file = h('input', { type: 'text', name: 'file', autocomplete: 'off', value: initialFile, placeholder: 'e.g. MEMORY.md' });
  const list = h('ol', { class: 'history', 'aria-label': 'Writes, newest first', 'data-testid': 'history' });
  const status = h('p', { class: 'muted', role: 'status' });
  const form = h('form', { class: 'row', 'aria-label': 'Filter the writes' }, field('User', user), field('File', file), h('button', { type: 'submit', text: 'Filter' }));
  let running = false;
  let again = false;
  const load = async () => {
    const url = agentPath(agent, `/history${query({ ref: 'live', user: user.value.trim(), file: file.value.trim(), limit: 50 })}`);
    try {
      const res = await get(url);
      const entries = Array.isArray(res) ? res : res?.entries || res?.history || [];
      clear(list, entries.map(entry));
      status.textContent = entries.length ? `${entries.length} ${entries.length === 1 ? 'write' : 'writes'} shown; new ones appear at the top as they happen.` : 'No write matches.';
    } catch (err) {
      clear(list, errorBox('The history could not be loaded.', err));
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    load();
  });
  section.append(form, status, list);
  load();
  const refresh = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    do {
      again = false;
      await load();
    } while (again);
    running = false;
  };
  ctx.onCleanup(onEvent((ev) => {
    if (ev.type !== 'write' || ev.agent !== agent) return;
    // Writes that arrive while the history loads make one more load.
    refresh();
  }));
}

function entry(e) {
  const files = e.files || [];
  return h('li', { 'data-commit': e.commit },
    h('div', { class: 'meta' }, time(e.time), h('span', { text: `by ${e.agent || 'unknown'}` }), e.user ? h('span', { text: `user ${e.user}` }) : h('span', { text: 'no user' }),
      h('code', { text: short(e.commit) })),
    h('p', {}, h('strong', { text: files.join(', ') || '(no file)' }), e.message ? ` — ${e.message.split('\n')[0]}` : ''),
    unified(e.diff || '', `Diff of ${files.join(', ')} at ${short(e.commit)}`));
}
