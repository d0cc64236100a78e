// Edit: a file editor with the ETag rule. The text typed is kept in the
// page and in a draft (localStorage) until a save succeeds: a stale save is
// refused with the other version shown beside yours, and no failure ever
// replaces what you typed. The budget indicator counts chars (code points)
// as you type against the per-file budget of the agent's prompt report.

import { agentPath, filePath, get, post, query, request, ApiError } from '../api.js';
import { h, clear, chars, codePoints, percent, short, field, alert } from '../dom.js';
import { textDiff } from '../diff.js';
import { agentHeader, bar, budgetClass, errorBox } from './common.js';

const FILES = ['MEMORY.md', 'SOUL.md', 'AGENTS.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'HEARTBEAT.md', 'BOOTSTRAP.md'];

export async function render(ctx) {
  const agent = ctx.params[0];
  const path = ctx.query.get('path') || 'MEMORY.md';
  const user = ctx.query.get('user') || '';
  ctx.main.append(...agentHeader(agent, '/edit', 'Edit'));
  ctx.main.append(chooser(agent, path, user, ctx.navigate));
  const ed = new Editor(agent, path, user);
  ctx.main.append(ed.el);
  ctx.setGuard((quiet) => !ed.dirty() || (!quiet && window.confirm('You have unsaved changes (kept as a draft in this browser). Leave anyway?')));
  await ed.load();
}

function chooser(agent, path, user, navigate) {
  const p = h('input', { type: 'text', name: 'path', list: 'known-files', value: path, autocomplete: 'off', required: true });
  const u = h('input', { type: 'text', name: 'user', value: user, autocomplete: 'off', placeholder: 'the agent’s own' });
  const form = h('form', { class: 'row', 'aria-label': 'Choose a file' },
    field('File', p), h('datalist', { id: 'known-files' }, FILES.map((f) => h('option', { value: f }))),
    field('User', u, 'for a user’s USER.md or memory'), h('button', { type: 'submit', class: 'secondary', text: 'Open' }));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    navigate(`/ui/agents/${encodeURIComponent(agent)}/edit${query({ path: p.value.trim(), user: u.value.trim() })}`);
  });
  return form;
}

class Editor {
  constructor(agent, path, user) {
    Object.assign(this, { agent, path, user, etag: '', saved: '', limit: 0 });
    this.key = `quire-draft:${agent}:${user}:${path}`;
    this.area = h('textarea', { id: 'editor', name: 'content', spellcheck: 'false', 'aria-describedby': 'budget-words' });
    this.area.addEventListener('input', () => this.typed());
    this.budgetBar = h('div');
    this.budgetWords = h('span', { id: 'budget-words', class: 'bar-label' });
    this.msg = h('div', { 'aria-live': 'polite', 'data-testid': 'editor-message' });
    this.conflict = h('div', { 'data-testid': 'conflict' });
    this.saveBtn = h('button', { type: 'submit', text: 'Save' });
    this.resetBtn = h('button', { type: 'button', class: 'secondary', text: 'Reset to default', onclick: () => this.reset() });
    const title = `${user ? `users/${user}/` : ''}${path}`;
    const form = h('form', { 'aria-label': `Edit ${title}` },
      h('h2', { text: title }), h('p', { class: 'muted', 'data-testid': 'version' }),
      h('label', { for: 'editor' }, `Content of ${title}`), this.area,
      h('div', { class: 'editor-status' }, h('div', { class: 'bar-row' }, h('span', { text: 'Budget' }), this.budgetBar, this.budgetWords)),
      h('div', { class: 'row' }, this.saveBtn, this.resetBtn), this.msg, this.conflict);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.save();
    });
    this.version = form.querySelector('[data-testid=version]');
    this.el = form;
  }

  dirty() {
    return this.area.value !== this.saved;
  }

  async load() {
    try {
      const f = await get(agentPath(this.agent, `/files/${filePath(this.path)}${query({ user: this.user })}`));
      this.etag = f.etag;
      this.saved = f.content;
      this.version.textContent = `Version ${f.etag} at commit ${short(f.commit)}.`;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        clear(this.msg, errorBox(`${this.path} could not be read.`, err));
        return;
      }
      this.etag = '*';
      this.saved = '';
      this.version.textContent = 'A new file: saving creates it.';
    }
    this.area.value = this.saved;
    const draft = this.readDraft();
    if (draft && draft.text !== this.saved) {
      this.area.value = draft.text;
      this.etag = draft.etag || this.etag;
      clear(this.msg, alert('warn', 'Your unsaved text from before is restored.', 'Save to keep it, or reload the file to drop it.'));
    }
    await this.loadLimit();
    this.typed();
  }

  async loadLimit() {
    try {
      const res = await post(agentPath(this.agent, '/prompt'), this.user ? { user: this.user } : {});
      const r = res.report || {};
      const f = (r.files || []).find((x) => x.name === this.path || (x.path || '').endsWith(`/${this.path}`));
      this.limit = r.budget?.per_file || 0;
      this.clamped = f && f.limit_chars > 0 && f.limit_chars < this.limit ? f.limit_chars : 0;
    } catch {
      this.limit = 0;
    }
  }

  typed() {
    const n = codePoints(this.area.value);
    const cls = budgetClass(n, this.limit, false);
    clear(this.budgetBar, bar(n, this.limit, cls));
    let words = this.limit ? `${chars(n)} of the ${chars(this.limit)} per-file budget (${percent(n, this.limit)})` : chars(n);
    if (this.limit && n > this.limit) words += ': over budget, the prompt will keep its head and tail and cut the middle';
    else if (this.clamped && n > this.clamped) words += `; only ${chars(this.clamped)} are left of the total budget for it`;
    this.budgetWords.textContent = words;
    this.budgetWords.dataset.level = cls || 'ok';
    if (this.dirty()) this.writeDraft();
    else this.dropDraft();
  }

  readDraft() {
    try {
      return JSON.parse(localStorage.getItem(this.key) || 'null');
    } catch {
      return null;
    }
  }

  writeDraft() {
    try {
      localStorage.setItem(this.key, JSON.stringify({ text: this.area.value, etag: this.etag }));
    } catch {
      // a full or disabled storage keeps the text in the page only
    }
  }

  dropDraft() {
    try {
      localStorage.removeItem(this.key);
    } catch {
      // nothing stored
    }
  }

  async save() {
    const text = this.area.value;
    this.saveBtn.disabled = true;
    clear(this.msg, h('p', { class: 'muted', text: 'Saving…' }));
    try {
      const { data, res } = await request('PUT', agentPath(this.agent, `/files/${filePath(this.path)}${query({ user: this.user })}`),
        { body: { content: text }, headers: { 'If-Match': this.etag || '*' } });
      this.etag = data?.etag || res.headers.get('ETag') || this.etag;
      this.saved = text;
      this.dropDraft();
      clear(this.conflict);
      const where = data?.branch?.startsWith('proposals/') ? `proposed as branch ${data.branch}` : (data?.branch ? `committed on ${data.branch}` : 'written into the working tree');
      const msg = `Saved: ${where}${data?.commit ? ` (${short(data.commit)})` : ''}.`;
      clear(this.msg, alert('ok', msg));
      this.version.textContent = `Version ${this.etag}.`;
    } catch (err) {
      if (err.status === 412 || err.code === 'stale') await this.stale(err);
      else clear(this.msg, errorBox('Not saved; your text is kept.', err));
    } finally {
      this.saveBtn.disabled = false;
    }
  }

  async stale(err) {
    let theirs = err.body?.content;
    let etag = err.body?.etag;
    if (theirs === undefined) {
      try {
        const f = await get(agentPath(this.agent, `/files/${filePath(this.path)}${query({ user: this.user })}`));
        theirs = f.content;
        etag = f.etag;
      } catch {
        theirs = '';
      }
    }
    clear(this.msg, h('div', { class: 'alert', role: 'alert', 'data-testid': 'stale' },
      h('strong', { text: 'Not saved: someone changed this file since you opened it. ' }),
      h('span', { text: 'Your text is kept in the editor. Compare it with their version below, then save yours over theirs or take theirs.' }),
      h('div', { class: 'muted', text: err.message })));
    const mine = h('button', { type: 'button', text: 'Save mine over theirs' });
    const take = h('button', { type: 'button', class: 'secondary', text: 'Discard mine and take theirs' });
    mine.addEventListener('click', () => {
      this.etag = etag || this.etag;
      this.writeDraft();
      this.save();
    });
    take.addEventListener('click', () => {
      this.area.value = theirs;
      this.saved = theirs;
      this.etag = etag || this.etag;
      clear(this.conflict);
      this.typed();
    });
    clear(this.conflict, h('section', { 'aria-label': 'The other version' },
      h('h3', { text: `Their version (${etag || 'current'})` }),
      h('pre', { class: 'prompt', tabindex: '0', 'aria-label': 'Their version', 'data-testid': 'theirs', text: theirs }),
      h('h3', { text: 'From their version to yours' }), textDiff(theirs, this.area.value, 'From their version to yours'),
      h('div', { class: 'row' }, mine, take)));
  }

  async reset() {
    try {
      const { data } = await request('GET', agentPath(this.agent, `/templates/${filePath(this.path)}`), { headers: { Accept: 'text/plain' } });
      this.area.value = typeof data === 'string' ? data : data?.content || '';
      this.typed();
      clear(this.msg, alert('warn', `The default ${this.path} is in the editor: save to keep it.`));
      this.area.focus();
    } catch (err) {
      clear(this.msg, err.status === 404 ? alert('warn', `There is no default for ${this.path}.`) : errorBox('The default could not be loaded; your text is kept.', err));
    }
  }
}
