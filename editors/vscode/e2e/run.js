// A real VS Code: code-server with the built extension (dist/quire.vsix)
// and the real `quire lsp`, driven by headless Chromium (Debian's) through
// playwright-core. It opens the example's SOUL.md and checks what a person
// sees: the faded cut with one warning, the code lens, the status bar
// item, no second outline in the breadcrumbs, Quire: Preview System Prompt,
// the explanation when quire.path names no binary, and which binary runs:
// quire.path's (the status item's tooltip says so) or, in this universal
// package with quire.path empty and no quire on PATH, none, with how to
// get one. Screenshots of each
// step are kept in $QUIRE_E2E_ARTIFACTS (default e2e/artifacts).
//
// Environment: QUIRE_BIN (the quire binary, default bin/quire at the
// repository root), CHROMIUM (default /usr/bin/chromium).
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const here = __dirname;
const repo = path.resolve(here, '../../..');
const quire = process.env.QUIRE_BIN || path.join(repo, 'bin/quire');
const vsix = path.join(repo, 'editors/vscode/dist/quire.vsix');
const codeServer = path.join(here, 'node_modules/.bin/code-server');
const artifacts = process.env.QUIRE_E2E_ARTIFACTS || path.join(here, 'artifacts');
const STEP_MS = 30000;

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
    console.log(`ok   ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${what}`);
  }
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`) });
}

/** startCodeServer starts code-server on a free loopback port and resolves
 * with its URL once it listens. */
function startCodeServer(userData, extDir, log) {
  // No quire on the extension's PATH: the universal package then has none.
  const PATH = (process.env.PATH || '').split(path.delimiter)
    .filter((d) => d && !fs.existsSync(path.join(d, 'quire'))).join(path.delimiter);
  const proc = spawn(codeServer, [
    '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--user-data-dir', userData, '--extensions-dir', extDir,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
  ], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, PATH } });
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('code-server did not start listening')), STEP_MS);
    const onData = (chunk) => {
      fs.appendFileSync(log, chunk);
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\/?/.exec(fs.readFileSync(log, 'utf8'));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`code-server exited with ${code}; see ${log}`)));
  });
  return { proc, url };
}

/** runCommand runs a command from the command palette by its title. */
async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP_MS });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: STEP_MS });
  await page.keyboard.press('Enter');
}

/** pick chooses the quick-pick row with text. */
async function pick(page, text) {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  await row.waitFor({ timeout: STEP_MS });
  await row.click();
}

/** goToLine puts the cursor on a 1-based line of the active editor. */
async function goToLine(page, line) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: STEP_MS });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await page.waitForTimeout(500);
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  for (const f of fs.readdirSync(artifacts)) fs.rmSync(path.join(artifacts, f), { force: true });
  for (const f of [quire, vsix, codeServer]) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: run make build and make test-editors first`);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-vscode-'));
  const userData = path.join(tmp, 'user');
  const extDir = path.join(tmp, 'extensions');
  const ws = path.join(tmp, 'workspace');
  fs.cpSync(path.join(repo, 'examples/agents'), ws, { recursive: true });
  const settingsFile = path.join(userData, 'User/settings.json');
  const settings = {
    'quire.path': quire,
    'workbench.startupEditor': 'none',
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'workbench.tips.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'chat.disableAIFeatures': true,
    'chat.commandCenter.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'editor.minimap.enabled': false,
    'breadcrumbs.enabled': true,
    'editor.wordWrap': 'off',
    '[markdown]': { 'editor.wordWrap': 'off' },
  };
  fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
  fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));

  const install = spawnSync(codeServer, ['--user-data-dir', userData, '--extensions-dir', extDir, '--install-extension', vsix], { encoding: 'utf8' });
  check(install.status === 0, `the built .vsix installs (${(install.stdout + install.stderr).trim().split('\n').pop()})`);

  const log = path.join(artifacts, 'code-server.log');
  const { proc, url } = startCodeServer(userData, extDir, log);
  let browser;
  try {
    const base = await url;
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
    await page.goto(`${base}/?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: STEP_MS });
    await page.locator('.statusbar').waitFor({ timeout: STEP_MS });

    // Open the example's SOUL.md (25,215 chars, over the 20,000 budget).
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: STEP_MS });
    await input.fill('concierge/SOUL.md');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'SOUL.md' }).first().waitFor({ timeout: STEP_MS });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'SOUL.md' }).waitFor({ timeout: STEP_MS });

    // The code lens on line 1.
    const lens = page.locator('.codelens-decoration', { hasText: 'Preview prompt' }).first();
    const lensOk = await lens.waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    const lensText = lensOk ? await lens.innerText() : '';
    check(/^25,215 \/ 20,000 chars · \d+ % of total · Preview prompt$/.test(lensText.trim()), `the code lens on line 1: "${lensText.trim()}"`);

    // The status bar item: the agent's total budget use.
    const item = page.locator('.statusbar-item', { hasText: /concierge [\d,]+ \/ 24,000/ }).first();
    const itemOk = await item.waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    check(itemOk, `the status bar item shows the budget: "${itemOk ? (await item.innerText()).trim() : ''}"`);
    if (itemOk) await item.hover();
    const which = page.getByText(`quire lsp: ${quire} (set in quire.path)`).first();
    const whichOk = await which.waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    check(whichOk, 'the status item\'s tooltip says which binary runs (quire.path\'s)');
    await shot(page, '1-status-tooltip');
    await page.mouse.move(700, 400);

    // The breadcrumbs are VS Code's own Markdown outline, without a
    // "Quire" level.
    const crumbs = page.locator('.breadcrumbs-control').first();
    let crumbsText = '';
    for (let i = 0; i < 60 && !crumbsText.includes('# SOUL.md'); i++) {
      await page.waitForTimeout(250); // until the Markdown outline is in
      crumbsText = await crumbs.innerText().catch(() => '');
    }
    check(crumbsText.includes('# SOUL.md') && !/Quire/.test(crumbsText), `no second outline in the breadcrumbs: "${crumbsText.replace(/\s+/g, ' ').trim()}"`);
    await shot(page, '1-soul-opened');

    // Inside the cut (lines 164–282): faded text, and no warning squiggle
    // on every line; the one warning sits on line 164.
    await goToLine(page, 240);
    const faded = page.locator('.monaco-editor .squiggly-inline-unnecessary');
    const fadedOk = await faded.first().waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    const squiggles = await page.locator('.view-overlays .squiggly-warning').count();
    check(fadedOk && squiggles === 0, `the cut is faded without squiggles (${await faded.count()} faded, ${squiggles} warning squiggles around line 240)`);
    await shot(page, '2-soul-cut-faded');
    await goToLine(page, 164);
    const warnOk = await page.locator('.view-overlays .squiggly-warning').first().waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    const warnings = await page.locator('.view-overlays .squiggly-warning').count();
    check(warnOk && warnings === 1, `one warning squiggle on the first line of the cut (${warnings})`);
    await shot(page, '3-soul-cut-first-line');

    // Quire: Preview System Prompt → main · dm · no user.
    await runCommand(page, 'Quire: Preview System Prompt');
    await pick(page, 'main');
    await pick(page, 'dm');
    await pick(page, '(no user');
    const tab = page.locator('.tab', { hasText: 'concierge · main · dm' }).first();
    const tabOk = await tab.waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    check(tabOk, 'the preview opens in a tab "concierge · main · dm"');
    await page.waitForTimeout(1500);
    const firstLine = (await page.locator('.editor-group-container.active .view-line').first().innerText().catch(() => ''))
      .replace(/\u00a0/g, ' ');
    check(/^You are Lúcia, the concierge of Casa Azulejo/.test(firstLine), `the preview starts with the identity: "${firstLine.slice(0, 60)}"`);
    await page.keyboard.press('Control+F');
    const find = page.locator('.editor-group-container.active .find-widget textarea, .editor-group-container.active .find-widget input').first();
    await find.waitFor({ timeout: STEP_MS });
    await find.fill('[...truncated, read SOUL.md for full content...]');
    await page.waitForTimeout(800);
    const matches = (await page.locator('.editor-group-container.active .find-widget .matchesCount').innerText().catch(() => '')).trim();
    check(/^1 of 1$/.test(matches), `the preview holds the truncation marker once: "${matches}"`);
    await shot(page, '4-preview');
    await page.keyboard.press('Escape');

    // quire.path names no binary: a notification says what is missing and
    // offers to set it; the status bar says so too.
    fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'quire.path': path.join(tmp, 'no-such-quire') }, null, 2));
    await runCommand(page, 'Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: STEP_MS });
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'not an executable file' }).first();
    const toastOk = await toast.waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    const buttons = toastOk ? await toast.locator('.monaco-button').allInnerTexts() : [];
    check(toastOk && buttons.some((b) => /Set quire\.path/.test(b)) && buttons.some((b) => /Open Settings/.test(b)),
      `a missing binary is explained, with buttons: ${JSON.stringify(buttons)}`);
    const missingItem = await page.locator('.statusbar-item', { hasText: 'Quire: no quire binary' }).first()
      .waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    check(missingItem, 'the status bar says the binary is missing');
    await shot(page, '5-missing-binary');

    // The preview tab says the same.
    await runCommand(page, 'Quire: Preview System Prompt');
    await pick(page, 'main');
    await pick(page, 'dm');
    await pick(page, '(no user');
    const missingTab = page.locator('.tab', { hasText: 'main · dm' }).first();
    await missingTab.waitFor({ timeout: STEP_MS }).catch(() => {});
    await page.waitForTimeout(1000);
    const said = (await page.locator('.editor-group-container.active .view-line').first().innerText().catch(() => ''))
      .replace(/\u00a0/g, ' ');
    check(/quire\.path is set to .*not an executable file/.test(said), `the preview tab explains the missing binary: "${said.slice(0, 80)}"`);
    await shot(page, '6-missing-binary-preview');

    // quire.path empty: this universal package carries no binary and no
    // quire is on PATH, so the notification says how to get one.
    fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'quire.path': '' }, null, 2));
    await runCommand(page, 'Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: STEP_MS });
    const none = page.locator('.notifications-toasts .notification-toast', { hasText: 'carries no quire binary' }).first();
    const noneOk = await none.waitFor({ timeout: STEP_MS }).then(() => true, () => false);
    const noneText = noneOk ? (await none.innerText()).replace(/\s+/g, ' ') : '';
    check(/package for your platform/.test(noneText) && /go install \.\/cmd\/quire/.test(noneText),
      `the universal package without quire on PATH says how to get the binary: "${noneText.slice(0, 120)}"`);
    await shot(page, '7-no-binary-anywhere');
  } finally {
    if (browser) await browser.close().catch(() => {});
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch { /* already gone */ }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`vscode e2e: ${passed} passed, ${failed} failed (screenshots in ${artifacts})`);
  if (failed > 0) process.exit(1);
}

main().catch((err) => {
  console.error(`vscode e2e: ${err.stack || err}`);
  console.log(`vscode e2e: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
