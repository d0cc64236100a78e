// The console (/ui/) of a real `quire serve`, in headless Chromium
// (Debian's) driven by playwright-core. On a hosted repository with two
// agents it signs in with a token, opens an agent and previews a prompt
// whose SOUL.md is over budget (the cut is shown, and the preview is the
// API's prompt byte for byte), edits MEMORY.md with a stale ETag (refused,
// the other version shown, the typed text kept), approves one proposal
// (`git log main` then names the signed-in person) and rejects another,
// watches an agent write arrive on the memory page without a reload, and
// runs axe-core on every page (no violation of impact serious or
// critical), at 1440 px and 360 px wide. A token scoped to one agent sees
// only that one. Screenshots of each page are kept in $QUIRE_E2E_ARTIFACTS
// (default e2e/artifacts, git-ignored).
//
// Environment: QUIRE_BIN (default bin/quire at the repository root),
// CHROMIUM (default /usr/bin/chromium).
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const here = __dirname;
const repo = path.resolve(here, '../../..');
const quire = process.env.QUIRE_BIN || path.join(repo, 'bin/quire');
const artifacts = process.env.QUIRE_E2E_ARTIFACTS || path.join(here, 'artifacts');
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const STEP_MS = 30000;
const PERSON = { name: 'Ada Reviewer', email: 'ada@example.com' };
const TOKEN = 'tok-ada-e2e-0123456789';
const SCOPED = 'tok-studio-only-0123456789';

let passed = 0;
let failed = 0;
async function check(what, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${what}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${what}\n     ${String((err && err.stack) || err).split('\n').slice(0, 6).join('\n     ')}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// The workspace: concierge (SOUL.md far over the 20,000-char budget, a
// skill) and studio.
const soul = '# SOUL.md\n\nYou are Lúcia, the concierge.\n\n' +
  Array.from({ length: 400 }, (_, i) => `Paragraph ${i + 1}: guests come first, and every answer is short, warm and exact.\n`).join('\n');
const files = {
  'concierge/agent.yaml': 'name: concierge\ntype: predefined\n',
  'concierge/AGENTS.md': '# AGENTS.md\n\nAnswer guests of Casa Azulejo.\n',
  'concierge/SOUL.md': soul,
  'concierge/IDENTITY.md': '# IDENTITY.md\n\nName: Lúcia\n',
  'concierge/TOOLS.md': '# TOOLS.md\n\nThe booking system.\n',
  'concierge/MEMORY.md': '# MEMORY.md\n\nBreakfast is served from 7:30 to 10:30.\n',
  // A daily log older than the days the Memory page tries without a list.
  'concierge/memory/2026-01-15.md': '# 2026-01-15\n\n## 09:00\n\nThe pool opened for the season. OLD-LOG\n',
  'concierge/skills/airport/SKILL.md': '---\nname: airport\ndescription: Explain how to get between the airport and the house.\n---\nTake the metro red line.\n',
  // policy reject: a file over its 2,000-char budget makes a push (and a
  // proposal's merge) invalid.
  'studio/agent.yaml': 'name: studio\npolicy: reject\nbudget:\n  per_file: 2000\n',
  'studio/SOUL.md': '# SOUL.md\n\nA recording studio assistant.\n',
  'studio/MEMORY.md': '# MEMORY.md\n\nThe studio opens at nine.\n',
};

const gitEnv = (state) => ({
  ...process.env, XDG_STATE_HOME: state, GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Setup', GIT_AUTHOR_EMAIL: 'setup@example.com', GIT_COMMITTER_NAME: 'Setup', GIT_COMMITTER_EMAIL: 'setup@example.com',
});
function git(cwd, state, ...args) {
  return execFileSync('git', ['-c', 'credential.helper=', '-c', `credential.helper=!"${quire}" git-credential`, ...args],
    { cwd, env: gitEnv(state), stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

/** api calls the daemon's API on its unix socket (no token needed). */
function api(sock, method, p, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: sock, path: p, method, headers: { ...(data ? { 'Content-Type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        if (res.statusCode >= 300) reject(new Error(`${method} ${p}: ${res.statusCode} ${text}`));
        else resolve(json);
      });
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

/** waitFor polls cond (the daemon has no signal for "indexed" a test can
 * wait on over HTTP without a stream). */
async function waitFor(what, cond, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await cond()) return;
    } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** startDaemon runs quire serve and reads its addresses from its log. */
async function startDaemon(root) {
  const state = path.join(root, 'state');
  const tokens = path.join(root, 'tokens');
  fs.writeFileSync(tokens, `${TOKEN} * name="${PERSON.name}" email=${PERSON.email}\n${SCOPED} studio name="Stu Dio" email=stu@example.com\n`);
  const sock = path.join(root, 'q.sock');
  const log = path.join(artifacts, 'quire-serve.log');
  fs.writeFileSync(log, '');
  const proc = spawn(quire, ['serve', '--repos', path.join(root, 'repos'), '--allow-create', '--git-listen', '127.0.0.1:0', '--socket', sock,
    '--api-listen', '127.0.0.1:0', '--ui-listen', '127.0.0.1:0', '--token-file', tokens, '--cache-dir', path.join(root, 'cache')],
  { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: root, XDG_STATE_HOME: state } });
  const addrs = {};
  let text = '';
  proc.stderr.on('data', (b) => {
    fs.appendFileSync(log, b);
    text += b.toString();
    for (const line of text.split('\n')) {
      try {
        const e = JSON.parse(line);
        if (e.msg === 'listening' && e.server === 'git') addrs.git = e.addr;
        if (e.msg === 'listening' && e.server === 'api (tcp)') addrs.api = e.addr;
        if (e.msg === 'console listening' || (e.msg === 'listening' && e.server === 'console')) addrs.ui = e.addr;
      } catch { /* a partial line */ }
    }
  });
  const exited = new Promise((r) => proc.on('exit', r));
  try {
    await Promise.race([
      waitFor('quire serve to listen (git, API and console)', () => addrs.git && addrs.api && addrs.ui),
      exited.then((code) => { throw new Error(`quire serve exited with ${code}; see ${log}`); }),
    ]);
  } catch (err) {
    proc.kill('SIGTERM');
    await exited;
    throw err;
  }
  return { proc, exited, sock, state, addrs, log };
}

async function setup(root, d) {
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  git(work, d.state, 'init', '-q', '-b', 'main');
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
    fs.writeFileSync(path.join(work, name), content);
  }
  git(work, d.state, 'add', '-A');
  git(work, d.state, 'commit', '-q', '-m', 'the agents');
  git(work, d.state, 'push', '-q', `http://${d.addrs.git}/agents.git`, 'main');
  // A second deploy, so the agent page can compare two.
  fs.appendFileSync(path.join(work, 'concierge/AGENTS.md'), '\nAlways offer a map.\n');
  git(work, d.state, 'commit', '-q', '-am', 'concierge offers a map');
  git(work, d.state, 'push', '-q', `http://${d.addrs.git}/agents.git`, 'main');
  await waitFor('both agents to be deployed and indexed', async () => {
    const st = await api(d.sock, 'GET', '/v1/status');
    return ['concierge', 'studio'].every((n) => st.agents.some((a) => a.name === n && a.deployed_commit && a.indexed_commit === a.deployed_commit));
  });
  // Two proposals: the agent asks to change IDENTITY.md and TOOLS.md.
  for (const [file, add] of [['IDENTITY.md', 'Pronouns: she/her\n'], ['TOOLS.md', 'The taxi line.\n']]) {
    const f = await api(d.sock, 'GET', `/v1/agents/concierge/files/${file}`);
    const w = await api(d.sock, 'PUT', `/v1/agents/concierge/files/${file}`, { content: f.content + add }, { 'If-Match': f.etag });
    assert(/^proposals\//.test(w.branch || ''), `a persona write should open a proposal, got ${JSON.stringify(w)}`);
  }
  // A proposal whose merge fails validation: studio's SOUL.md over its
  // budget under policy reject.
  const f = await api(d.sock, 'GET', '/v1/agents/studio/files/SOUL.md');
  const w = await api(d.sock, 'PUT', '/v1/agents/studio/files/SOUL.md', { content: f.content + 'Quiet please, the red light is on.\n'.repeat(60) }, { 'If-Match': f.etag });
  assert(/^proposals\//.test(w.branch || ''), `studio's SOUL.md write should open a proposal, got ${JSON.stringify(w)}`);
  return { bare: path.join(root, 'repos', 'agents.git') };
}

/** axe runs axe-core on the page (evaluated, so the CSP does not apply to
 * it) and fails on violations of impact serious or critical. */
async function axe(page, name, results) {
  await page.evaluate(axeSource);
  const res = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  results.push({ page: name, violations: res.violations.length, serious: bad.length });
  assert(bad.length === 0, `${name}: ${bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')})`).join('\n')}`);
}

async function shot(page, name) {
  const file = path.join(artifacts, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

/** heading waits for the page's h1 to say text. */
async function heading(page, text) {
  await page.locator('h1', { hasText: text }).waitFor({ timeout: STEP_MS });
}

async function run(root, d, ws, browser) {
  const base = `http://${d.addrs.ui}`;
  const problems = [];
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-GB', timezoneId: 'Europe/Lisbon' });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  // An API error answer is logged by Chromium as a failed load (the sign-in
  // page's 401, a daily log that does not exist): those are expected.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`${m.text()} (${page.url()})`);
  });
  page.on('pageerror', (e) => problems.push(`${e.message} (${page.url()})`));
  const axeResults = [];
  const pages = [];
  const visit = async (name, fn) => {
    await check(`${name}: shown, no axe-core violation of impact serious or critical`, async () => {
      await fn();
      pages.push(await shot(page, name));
      await axe(page, name, axeResults);
    });
  };

  await visit('sign-in', async () => {
    await page.goto(`${base}/ui/`);
    await heading(page, 'Sign in');
  });
  await check('a wrong token is refused with a message', async () => {
    await page.getByLabel('Access token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not signed in' }).waitFor();
  });
  await visit('overview', async () => {
    await page.getByLabel('Access token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Overview');
    await page.getByText(`Signed in as ${PERSON.name}`).waitFor();
    await page.locator('table a', { hasText: 'concierge' }).waitFor();
    await page.locator('table a', { hasText: 'studio' }).waitFor();
  });
  await check('the overview\'s budget is what the prompt holds against the total budget, SOUL.md named as cut', async () => {
    const res = await api(d.sock, 'POST', '/v1/agents/concierge/prompt', { session: 'main', channel: 'dm' });
    const row = page.locator('tr', { has: page.locator('a', { hasText: 'concierge' }) });
    const label = await row.locator('[data-testid=budget-total]').textContent();
    const n = (x) => x.toLocaleString('en-GB');
    assert(label.includes(`${n(res.report.injected_chars)} chars of ${n(res.report.budget.total)} chars in the prompt`), `the budget reads ${JSON.stringify(label)}, the report ${res.report.injected_chars} of ${res.report.budget.total}`);
    assert(label.includes('cut: SOUL.md'), `the budget does not name SOUL.md as cut: ${JSON.stringify(label)}`);
    assert(res.report.injected_chars <= res.report.budget.total, 'the report injects more than its budget');
  });

  let preview = '';
  await visit('agent', async () => {
    await page.locator('table a', { hasText: 'concierge' }).click();
    await heading(page, 'Agent: concierge');
    await page.locator('[data-testid=prompt]').waitFor();
    await page.locator('[data-file="SOUL.md"][data-status="truncated"]').waitFor();
    await page.locator('[data-testid=prompt] mark.cut').first().waitFor();
    preview = await page.locator('[data-testid=prompt]').textContent();
  });
  await check('the prompt preview is the API\'s prompt byte for byte, with SOUL.md\'s cut shown', async () => {
    const res = await api(d.sock, 'POST', '/v1/agents/concierge/prompt', { session: 'main', channel: 'dm' });
    assert(preview === res.prompt, `the preview (${preview.length} chars) differs from the API's prompt (${res.prompt.length} chars)`);
    const cut = await page.locator('[data-testid=prompt] mark.cut').first().textContent();
    assert(cut.includes('truncated, read SOUL.md'), `the marked cut is ${JSON.stringify(cut)}`);
    assert(await page.locator('[data-testid=cuts]', { hasText: 'SOUL.md' }).count() === 1, 'the list of cut files does not name SOUL.md');
  });
  await check('the agent page compares the prompts of two deploys', async () => {
    await page.getByRole('button', { name: 'Compare prompts' }).click();
    await page.locator('.diff .add', { hasText: 'Always offer a map.' }).first().waitFor();
  });
  await visit('memory', async () => {
    await page.getByRole('link', { name: 'Memory', exact: true }).click();
    await heading(page, 'Memory: concierge');
    await page.locator('pre', { hasText: 'Breakfast is served' }).first().waitFor();
  });
  await check('an agent write arrives on the memory page live, without a reload', async () => {
    const mark = `LIVE-${Date.now()}`;
    await page.evaluate(() => { window.__sameDocument = true; });
    await api(d.sock, 'POST', '/v1/agents/concierge/memory/append', { user: 'ines', text: `Ines asked for a late checkout. ${mark}` });
    await page.locator('[data-testid=history] .add', { hasText: mark }).waitFor();
    assert(await page.evaluate(() => window.__sameDocument === true), 'the page was reloaded');
  });
  await check('the daily logs say which are shown: all from the files list, else the last days only', async () => {
    const note = await page.locator('[data-testid=logs-note]').textContent();
    const listed = await api(d.sock, 'GET', '/v1/agents/concierge/files').then((r) => Array.isArray(r.files), () => false);
    if (listed) {
      assert(/^One daily log/.test(note), `with a files list the note reads ${JSON.stringify(note)}`);
      const log = page.locator('details', { hasText: 'memory/2026-01-15.md' });
      await log.locator('summary').click();
      await log.locator('pre', { hasText: 'OLD-LOG' }).waitFor();
    } else {
      assert(/^Only the last \d+ days are shown/.test(note), `without a files list the note reads ${JSON.stringify(note)}`);
    }
  });
  await check('the memory search shows hits with their score and its text and vector parts', async () => {
    await page.getByLabel('Search for').fill('breakfast');
    await page.getByRole('search', { name: 'Memory search' }).getByRole('button', { name: 'Search' }).click();
    const hit = page.locator('.hits li', { hasText: 'Breakfast' }).first();
    await hit.waitFor();
    const res = await api(d.sock, 'POST', '/v1/agents/concierge/memory/search', { query: 'breakfast' });
    const top = res.hits.find((x) => x.text.includes('Breakfast'));
    assert(top && typeof top.text_score === 'number' && typeof top.vector_score === 'number', `the API's hit lacks its parts: ${JSON.stringify(top)}`);
    const f = (x) => Number(x).toFixed(3);
    const want = `score ${f(top.score)} = text ${f(top.text_score)} + vector ${f(top.vector_score)}`;
    const got = await hit.locator('[data-testid=score]').textContent();
    assert(got === want, `the hit shows ${JSON.stringify(got)}, the API ${JSON.stringify(want)}`);
  });

  await visit('edit', async () => {
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await heading(page, 'Edit: concierge');
    await page.locator('[data-testid=version]', { hasText: 'Version' }).waitFor();
  });
  await check('a stale save of MEMORY.md is refused, the other version shown and the typed text kept', async () => {
    const editor = page.getByLabel('Content of MEMORY.md');
    const before = await page.locator('#budget-words').textContent();
    await editor.press('Control+End');
    await editor.pressSequentially('\nTyped by Ada: TYPED-MARK\n');
    await page.locator('#budget-words').filter({ hasNotText: before }).waitFor();
    const f = await api(d.sock, 'GET', '/v1/agents/concierge/files/MEMORY.md');
    await api(d.sock, 'PUT', '/v1/agents/concierge/files/MEMORY.md', { content: `${f.content}Written elsewhere: OTHER-MARK\n` }, { 'If-Match': f.etag });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('[data-testid=stale]').waitFor();
    assert((await editor.inputValue()).includes('TYPED-MARK'), 'the typed text is gone from the editor');
    await page.locator('[data-testid=theirs]', { hasText: 'OTHER-MARK' }).waitFor();
    pages.push(await shot(page, 'edit-stale'));
    await axe(page, 'edit, a stale save', axeResults);
  });
  await check('saving over the other version then works, as a commit on live', async () => {
    await page.getByRole('button', { name: 'Save mine over theirs' }).click();
    await page.locator('[data-testid=editor-message]', { hasText: 'Saved' }).waitFor();
    const f = await api(d.sock, 'GET', '/v1/agents/concierge/files/MEMORY.md');
    assert(f.content.includes('TYPED-MARK'), 'MEMORY.md does not hold the typed text');
  });

  await visit('proposals', async () => {
    await page.getByRole('link', { name: 'Proposals', exact: true }).click();
    await heading(page, 'Proposals: concierge');
    await page.locator('[data-proposal]').nth(1).waitFor();
  });
  await check('approving a proposal merges it into main as the signed-in person', async () => {
    const item = page.locator('[data-proposal]', { hasText: 'IDENTITY.md' });
    await item.getByRole('button', { name: /Approve/ }).click();
    await page.locator('#main [role=status]', { hasText: 'approved' }).waitFor();
    const author = execFileSync('git', ['--git-dir', ws.bare, 'log', '-1', '--format=%an <%ae>', 'main']).toString().trim();
    assert(author === `${PERSON.name} <${PERSON.email}>`, `main's last commit is by ${author}`);
    const identity = execFileSync('git', ['--git-dir', ws.bare, 'show', 'main:concierge/IDENTITY.md']).toString();
    assert(identity.includes('Pronouns'), 'IDENTITY.md on main lacks the proposal');
  });
  await check('rejecting the other closes it', async () => {
    const item = page.locator('[data-proposal]', { hasText: 'TOOLS.md' });
    await item.getByRole('button', { name: 'Reject' }).click();
    await page.getByText('No open proposal.').waitFor();
    const branches = execFileSync('git', ['--git-dir', ws.bare, 'branch', '--list', 'proposals/concierge/*']).toString().trim();
    assert(branches === '', `proposal branches remain: ${branches}`);
  });

  await check('a proposal whose merge fails validation is refused with the daemon\'s message, and main does not move', async () => {
    const main = () => execFileSync('git', ['--git-dir', ws.bare, 'rev-parse', 'main']).toString().trim();
    const before = main();
    await page.goto(`${base}/ui/agents/studio/proposals`);
    await heading(page, 'Proposals: studio');
    const item = page.locator('[data-proposal]', { hasText: 'SOUL.md' });
    await item.getByRole('button', { name: /Approve/ }).click();
    const refusal = item.locator('[data-testid=refusal]');
    await refusal.waitFor();
    const shown = await refusal.textContent();
    const id = await item.getAttribute('data-proposal');
    let answer = null;
    try {
      await api(d.sock, 'POST', `/v1/agents/studio/proposals/${id}/approve`);
    } catch (err) {
      answer = JSON.parse(err.message.slice(err.message.indexOf('{')));
    }
    assert(answer && answer.error && answer.error.code === 'invalid', `approving again via the API: ${JSON.stringify(answer)}`);
    assert(shown.includes(answer.error.message), `the page shows ${JSON.stringify(shown)}, the daemon says ${JSON.stringify(answer.error.message)}`);
    assert(main() === before, 'main moved on a refused approve');
    const open = execFileSync('git', ['--git-dir', ws.bare, 'branch', '--list', `proposals/studio/${id}`]).toString().trim();
    assert(open !== '', 'the refused proposal\'s branch is gone');
    await refusal.scrollIntoViewIfNeeded();
    pages.push(await shot(page, 'proposals-refused'));
    await axe(page, 'proposals, a refused approve', axeResults);
    await page.goto(`${base}/ui/agents/concierge/proposals`);
    await heading(page, 'Proposals: concierge');
  });

  await visit('skills', async () => {
    await page.getByRole('link', { name: 'Skills', exact: true }).click();
    await heading(page, 'Skills: concierge');
    await page.locator('[data-skill=airport]').waitFor();
  });

  await check('reset to default puts the template in the editor, and leaving with the text unsaved asks first', async () => {
    await page.goto(`${base}/ui/agents/concierge/edit?path=SOUL.md`);
    await page.locator('[data-testid=version]', { hasText: 'Version' }).waitFor();
    const editor = page.getByLabel('Content of SOUL.md');
    const before = await editor.inputValue();
    await page.getByRole('button', { name: 'Reset to default' }).click();
    await page.locator('[data-testid=editor-message]', { hasText: 'default SOUL.md' }).waitFor();
    const after = await editor.inputValue();
    assert(after.length > 0 && after !== before, 'the editor does not hold the default SOUL.md');
    const asked = new Promise((resolve) => page.once('dialog', async (d) => { const m = d.message(); await d.dismiss(); resolve(m); }));
    await page.getByRole('link', { name: 'Skills', exact: true }).click();
    assert(/unsaved/.test(await asked), 'leaving did not ask');
    assert((await editor.inputValue()) === after, 'the text in the editor changed');
    await heading(page, 'Edit: concierge');
  });

  await check('a token scoped to studio sees studio only', async () => {
    const other = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const p = await other.newPage();
    p.setDefaultTimeout(STEP_MS);
    await p.goto(`${base}/ui/`);
    await p.getByLabel('Access token').fill(SCOPED);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.locator('table a', { hasText: 'studio' }).waitFor();
    assert(await p.locator('table a', { hasText: 'concierge' }).count() === 0, 'the overview shows concierge');
    await p.goto(`${base}/ui/agents/concierge`);
    await p.getByRole('alert').first().waitFor();
    assert(await p.locator('[data-testid=prompt]').count() === 0, 'the page shows concierge\'s prompt');
    await other.close();
  });

  const narrow = await browser.newContext({ viewport: { width: 360, height: 780 }, locale: 'en-GB', timezoneId: 'Europe/Lisbon' });
  const small = await narrow.newPage();
  small.setDefaultTimeout(STEP_MS);
  small.on('pageerror', (e) => problems.push(`${e.message} (${small.url()}, 360 px)`));
  await small.goto(`${base}/ui/`);
  await small.getByLabel('Access token').fill(TOKEN);
  await small.getByRole('button', { name: 'Sign in' }).click();
  await heading(small, 'Overview');
  for (const [name, url, title, ready] of [
    ['overview', '/ui/', 'Overview', 'table a'],
    ['agent', '/ui/agents/concierge', 'Agent: concierge', '[data-testid=prompt]'],
    ['memory', '/ui/agents/concierge/memory', 'Memory: concierge', '[data-testid=history] li'],
    ['proposals', '/ui/agents/concierge/proposals', 'Proposals: concierge', 'text=No open proposal.'],
    ['edit', '/ui/agents/concierge/edit?path=MEMORY.md', 'Edit: concierge', '[data-testid=version] >> text=Version'],
    ['skills', '/ui/agents/concierge/skills', 'Skills: concierge', '[data-skill]'],
  ]) {
    await check(`${name} at 360 px: no sideways scrolling, no axe-core violation of impact serious or critical`, async () => {
      await small.goto(base + url);
      await heading(small, title);
      await small.locator(ready).first().waitFor();
      const { width, wide } = await small.evaluate(() => ({
        width: document.documentElement.scrollWidth,
        wide: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 362 && !e.closest('.table-wrap, .diff, .prompt'))
          .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)} px)`),
      }));
      pages.push(await shot(small, `${name}-360`));
      await axe(small, `${name} at 360 px`, axeResults);
      assert(width <= 362, `the page is ${width} px wide: ${wide.join(', ')}`);
    });
  }
  await narrow.close();

  await check('no script error and nothing refused by the CSP on any page', async () => {
    assert(problems.length === 0, problems.join('\n'));
  });
  console.log(`axe-core: ${axeResults.map((r) => `${r.page} ${r.violations} violations (${r.serious} serious or critical)`).join('; ')}`);
  console.log(`screenshots: ${artifacts}`);
  await context.close();
}

async function main() {
  const started = Date.now();
  fs.mkdirSync(artifacts, { recursive: true });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-console-'));
  let d;
  let browser;
  try {
    d = await startDaemon(root);
    const ws = await setup(root, d);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
    await run(root, d, ws, browser);
  } catch (err) {
    failed++;
    console.log(`FAIL ${err.stack || err}`);
    if (d) console.log(`     the daemon's log: ${d.log}`);
  } finally {
    if (browser) await browser.close();
    if (d) {
      d.proc.kill('SIGTERM');
      await d.exited;
    }
    fs.rmSync(root, { recursive: true, force: true });
  }
  console.log(`console e2e: ${passed} passed, ${failed} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exitCode = failed > 0 ? 1 : 0;
}

main();
