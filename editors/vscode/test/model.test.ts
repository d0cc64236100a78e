import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bundledBinary, chooseServer, decodeUserDir, describeServer, groupThousands, isQuireDocument, missingBinaryMessage,
  parsePreviewQuery, previewUri, resolveCommand, statusText, usersIn,
} from '../src/model';

test('preview URIs carry their parameters', () => {
  const p = { agent: 'concierge', user: 'bob@example.com', session: 'main', channel: 'group', uri: 'file:///w/SOUL.md' };
  const u = previewUri(p);
  assert.match(u, /^quire-prompt:\/concierge%20%C2%B7%20bob%40example\.com%20%C2%B7%20main%20%C2%B7%20group\.md\?/);
  const query = u.slice(u.indexOf('?') + 1);
  assert.deepEqual(parsePreviewQuery(query), p);
});

test('a bad preview query reads as no parameters', () => {
  assert.deepEqual(parsePreviewQuery('%7Bnot json'), {});
  assert.deepEqual(parsePreviewQuery(encodeURIComponent('{"agent": 3, "user": "a"}')), { user: 'a' });
});

test('thousands are grouped like the server does', () => {
  for (const [n, s] of [[0, '0'], [999, '999'], [1000, '1,000'], [24000, '24,000'], [1234567, '1,234,567']] as const) {
    assert.equal(groupThousands(n), s);
  }
});

test('the status bar shows the total budget use and what is cut', () => {
  const s = statusText({
    agent: 'concierge', session: 'main', channel: 'dm', budget: { per_file: 20000, total: 24000 },
    injected_chars: 18040, remaining_chars: 5960,
    files: [
      { name: 'AGENTS.md', status: 'full', injected_chars: 2000, original_chars: 2000 },
      { name: 'SOUL.md', status: 'truncated', injected_chars: 16040, original_chars: 25000 },
    ],
  });
  assert.equal(s.text, '$(book) concierge 18,040 / 24,000 (75 %)');
  assert.match(s.tooltip, /SOUL\.md: truncated \(16,040 of 25,000 chars\)/);
  assert.equal(s.warning, true);
});

test('a budget in tokens is shown in tokens', () => {
  const s = statusText({
    agent: 'porter', session: 'main', channel: 'dm', budget: { unit: 'tokens', per_file: 20000, total: 24000, total_tokens: 400 },
    injected_chars: 785, remaining_chars: 0, injected_tokens: 202, remaining_tokens: 198,
    files: [{ name: 'SOUL.md', status: 'truncated', injected_chars: 352, original_chars: 4974 }],
  });
  assert.equal(s.text, '$(book) porter 202 / 400 (51 %)');
  assert.match(s.tooltip, /202 of 400 tokens of the total budget \(198 left\)/);
});

test('user directories decode like the server encodes them', () => {
  const cases: [string, string | undefined][] = [
    ['alice', 'alice'], ['bob%40example.com', 'bob@example.com'], ['tg-5512093311', 'tg-5512093311'],
    ['%C3%A9mile', 'émile'], ['Alice', undefined], ['.hidden', undefined], ['a%2', undefined],
  ];
  for (const [dir, id] of cases) assert.equal(decodeUserDir(dir), id, dir);
  assert.deepEqual(usersIn(['a/users/bob%40example.com/USER.md', 'a/users/alice/SOUL.md', 'a/users/alice/USER.md', 'a/SOUL.md']),
    ['alice', 'bob@example.com']);
});

test('Quire documents are recognised by name', () => {
  for (const p of ['SOUL.md', 'agents/a/agent.yaml', 'a/skills/pdf/SKILL.md', 'a/memory/2026-11-21.md', 'a/users/x/USER.md']) {
    assert.ok(isQuireDocument(p), p);
  }
  for (const p of ['README.md', 'docs/notes.md', 'agent.yml']) assert.ok(!isQuireDocument(p), p);
});

test('the server binary is found like a shell finds it', () => {
  const files = new Set(['/usr/local/bin/quire', '/home/a/go/bin/quire', '/opt/q/quire.exe']);
  const isExec = (p: string) => files.has(p);
  assert.equal(resolveCommand('quire', '/usr/bin:/usr/local/bin:/home/a/go/bin', isExec), '/usr/local/bin/quire');
  assert.equal(resolveCommand('quire', '/usr/bin::/home/a/go/bin/', isExec), '/home/a/go/bin/quire');
  assert.equal(resolveCommand('quire', '/usr/bin', isExec), undefined);
  assert.equal(resolveCommand('quire', undefined, isExec), undefined);
  assert.equal(resolveCommand('/home/a/go/bin/quire', '', isExec), '/home/a/go/bin/quire');
  assert.equal(resolveCommand('/nowhere/quire', '/usr/local/bin', isExec), undefined);
  assert.equal(resolveCommand('quire', '/opt/q', isExec, { delimiter: ';', extensions: ['.exe', ''] }), '/opt/q/quire.exe');
  assert.equal(resolveCommand('', '/usr/local/bin', isExec), undefined);
});

test('a missing binary is explained with what to do', () => {
  const onPath = missingBinaryMessage('quire', false);
  assert.match(onPath, /carries no quire binary and quire is not on your PATH/);
  assert.match(onPath, /package for your platform \(quire-vscode_<version>_<platform>\.vsix carries the binary\)/);
  assert.match(onPath, /release archive/);
  assert.match(onPath, /go install \.\/cmd\/quire` in a clone/);
  assert.match(onPath, /set quire\.path/);
  assert.doesNotMatch(onPath, /@latest|github\.com/);
  assert.match(missingBinaryMessage('/opt/quire', true), /quire\.path is set to "\/opt\/quire", but that is not an executable file/);
});

test('the bundled binary is bin/quire, bin/quire.exe on Windows', () => {
  assert.equal(bundledBinary('/home/a/.vscode/extensions/quirehq.quire-0.1.0-linux-x64', 'linux'),
    '/home/a/.vscode/extensions/quirehq.quire-0.1.0-linux-x64/bin/quire');
  assert.equal(bundledBinary('C:\\Users\\a\\ext', 'win32', '\\'), 'C:\\Users\\a\\ext\\bin\\quire.exe');
});

test('the server is quire.path, else the bundled binary, else quire on PATH', () => {
  const bundled = '/ext/bin/quire';
  const cases: { name: string; files: string[]; configured?: string; want: unknown }[] = [
    { name: 'a platform package', files: [bundled, '/usr/bin/quire'], want: { command: bundled, source: 'bundled' } },
    { name: 'quire.path wins over the bundled binary', files: [bundled, '/opt/q/quire'], configured: '/opt/q/quire',
      want: { command: '/opt/q/quire', source: 'quire.path' } },
    { name: 'quire.path as a name is looked up on PATH', files: [bundled, '/usr/bin/quire-dev'], configured: 'quire-dev',
      want: { command: '/usr/bin/quire-dev', source: 'quire.path' } },
    { name: 'the universal package finds quire on PATH', files: ['/usr/bin/quire'], want: { command: '/usr/bin/quire', source: 'PATH' } },
    { name: 'an empty quire.path is not set', files: ['/usr/bin/quire'], configured: '', want: { command: '/usr/bin/quire', source: 'PATH' } },
  ];
  for (const c of cases) {
    const isExecutable = (p: string) => c.files.includes(p);
    assert.deepEqual(chooseServer({ configured: c.configured, bundled, pathEnv: '/usr/local/bin:/usr/bin', isExecutable }), c.want, c.name);
  }
});

test('no server is explained: a wrong quire.path is not replaced by another binary', () => {
  const isExecutable = (p: string) => p === '/ext/bin/quire' || p === '/usr/bin/quire';
  const wrong = chooseServer({ configured: '/nowhere/quire', bundled: '/ext/bin/quire', pathEnv: '/usr/bin', isExecutable });
  assert.ok('missing' in wrong && /quire\.path is set to "\/nowhere\/quire"/.test(wrong.missing), JSON.stringify(wrong));
  const none = chooseServer({ bundled: '/ext/bin/quire', pathEnv: '/usr/bin', isExecutable: () => false });
  assert.ok('missing' in none && /quire-vscode_<version>_<platform>\.vsix/.test(none.missing), JSON.stringify(none));
});

test('Windows: quire.exe bundled, or found on PATH with its extension', () => {
  const isExecutable = (p: string) => p === 'C:\\tools/quire.exe'; // resolveCommand joins with /, which Windows takes
  assert.deepEqual(chooseServer({ bundled: 'C:\\ext\\bin\\quire.exe', pathEnv: 'C:\\Windows;C:\\tools', isExecutable, delimiter: ';', extensions: ['.exe', ''] }),
    { command: 'C:\\tools/quire.exe', source: 'PATH' });
});

test('which binary runs is said', () => {
  assert.match(describeServer({ command: '/ext/bin/quire', source: 'bundled' }), /bundled with the extension \(\/ext\/bin\/quire\)/);
  assert.match(describeServer({ command: '/opt/quire', source: 'quire.path' }), /\/opt\/quire \(set in quire\.path\)/);
  assert.match(describeServer({ command: '/usr/bin/quire', source: 'PATH' }), /found on PATH/);
  const r = { agent: 'a', session: 'main', channel: 'dm', budget: { per_file: 1, total: 10 }, injected_chars: 1, remaining_chars: 9, files: [] };
  assert.match(statusText(r, 'quire lsp: /ext/bin/quire').tooltip, /\nquire lsp: \/ext\/bin\/quire$/);
});
