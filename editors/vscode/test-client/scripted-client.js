// A scripted LSP client: starts `quire lsp` (the command in $QUIRE_LSP,
// default "quire lsp"), runs initialize → didOpen → diagnostics →
// executeCommand → shutdown/exit against a throw-away workspace, and checks
// that the server exits with status 0. Run by `make test-editors`.
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-languageserver-protocol/node');

const TIMEOUT_MS = 20000;

function soulText(chars) {
  const line = 'Ação, coração — 😀 emoji and plain words about the soul.\n';
  let out = '';
  while ([...out].length + [...line].length <= chars) out += line;
  return out + 'x'.repeat(chars - [...out].length);
}

function withTimeout(promise, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), TIMEOUT_MS); }),
  ]);
}

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-client-'));
  fs.writeFileSync(path.join(root, 'AGENTS.md'), '# Agents\nBe brief.\n');
  const soul = soulText(25000);
  fs.writeFileSync(path.join(root, 'SOUL.md'), soul);

  const [cmd, ...args] = (process.env.QUIRE_LSP || 'quire lsp').split(' ').filter(Boolean);
  const server = spawn(cmd, args, { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));

  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(server.stdout), new rpc.StreamMessageWriter(server.stdin));
  const published = [];
  let notify = () => {};
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => { published.push(p); notify(); });
  conn.listen();

  const nextDiagnostics = (uri, pred) => withTimeout(new Promise((resolve) => {
    const check = () => {
      const hit = published.find((p) => p.uri === uri && pred(p.diagnostics));
      if (hit) resolve(hit.diagnostics);
    };
    notify = check;
    check();
  }), `diagnostics for ${uri}`);

  let passed = 0;
  const rootUri = pathToFileURL(root).href;
  const init = await withTimeout(conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid, rootUri, capabilities: {}, workspaceFolders: [{ uri: rootUri, name: 'w' }],
  }), 'initialize');
  assert.ok(init.capabilities.executeCommandProvider.commands.includes('quire.previewPrompt'), 'quire.previewPrompt is advertised');
  assert.equal(init.capabilities.textDocumentSync.change, 1, 'full text sync');
  passed++;
  conn.sendNotification(rpc.InitializedNotification.type, {});

  const soulUri = pathToFileURL(path.join(root, 'SOUL.md')).href;
  conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
    textDocument: { uri: soulUri, languageId: 'markdown', version: 1, text: soul },
  });
  const diags = await nextDiagnostics(soulUri, (d) => d.length > 0);
  assert.equal(diags.length, 2, 'the faded cut and one warning for the over-budget SOUL.md');
  const fade = diags.find((d) => d.severity === 4);
  const warning = diags.find((d) => d.severity === 2);
  assert.ok(fade && warning, 'a hint and a warning');
  assert.deepEqual(fade.tags, [1], 'the cut is tagged unnecessary (faded)');
  assert.ok(fade.range.end.line > fade.range.start.line, 'the faded range covers the cut lines');
  assert.ok(!warning.tags || warning.tags.length === 0, 'the warning is not faded');
  assert.equal(warning.range.start.line, fade.range.start.line, 'the warning is on the first line of the cut');
  assert.equal(warning.range.end.line, warning.range.start.line, 'the warning is one line');
  assert.match(warning.message, /25,000 chars/);
  passed++;

  const now = '2026-11-22T09:30:00Z';
  const res = await withTimeout(conn.sendRequest(rpc.ExecuteCommandRequest.type, {
    command: 'quire.previewPrompt', arguments: [{ session: 'main', channel: 'dm', uri: soulUri, now }],
  }), 'executeCommand');
  assert.match(res.prompt, /\[\.\.\.truncated, read SOUL\.md for full content\.\.\.\]/);
  assert.equal(res.report.files.find((f) => f.name === 'SOUL.md').status, 'truncated');
  passed++;

  // The preview is byte for byte what `quire prompt` prints for the saved files.
  if (args.length === 1 && args[0] === 'lsp') {
    const cli = spawnSync(cmd, ['prompt', '--dir', root, '--session', 'main', '--channel', 'dm', '--now', now], { encoding: 'utf8' });
    assert.equal(cli.status, 0, `quire prompt: ${cli.stderr}`);
    assert.ok(cli.stdout === res.prompt, `preview (${res.prompt.length} chars) differs from quire prompt (${cli.stdout.length} chars)`);
    passed++;
  }

  conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
    textDocument: { uri: soulUri, version: 2 }, contentChanges: [{ text: '# Soul\nShort now.\n' }],
  });
  const cleared = await nextDiagnostics(soulUri, (d) => d.length === 0);
  assert.deepEqual(cleared, [], 'cleared with an empty list');
  passed++;

  await withTimeout(conn.sendRequest(rpc.ShutdownRequest.type), 'shutdown');
  conn.sendNotification(rpc.ExitNotification.type);
  const { code, signal } = await withTimeout(exited, 'the server to exit');
  assert.equal(signal, null);
  assert.equal(code, 0, 'exit after shutdown ends the server with status 0');
  passed++;
  conn.dispose();
  fs.rmSync(root, { recursive: true, force: true });
  console.log(`scripted client: ${passed} passed, 0 failed`);
}

main().catch((err) => {
  console.error(`scripted client: ${err.stack || err}`);
  console.log('scripted client: 0 passed, 1 failed');
  process.exit(1);
});
