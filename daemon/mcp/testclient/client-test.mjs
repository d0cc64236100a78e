// Drives Quire's MCP server with the official TypeScript SDK client over
// every transport Quire offers: streamable HTTP on the daemon's unix
// socket, streamable HTTP on --api-listen with a bearer token, and stdio
// (`quire mcp`). For each: initialize, list tools, call every tool, get
// the prompt (equal to the API's and `quire prompt`'s), read a resource,
// and receive a change notification after a git push. Then the scope
// rules: a token for agent alpha cannot use beta; user alice never sees
// user bob's memory. Last, mcp-remote (the stdio bridge desktop hosts use
// for remote servers) in front of --api-listen: with a token it serves
// the tools; with a wrong one it shows Quire's message, not a failure of
// OAuth discovery.
//
// QUIRE is the quire binary (default ../../../bin/quire).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const QUIRE = resolve(process.env.QUIRE || join(here, '../../../bin/quire'));
const TOOLS = ['memory_append', 'memory_get', 'memory_search', 'memory_write', 'skill_get', 'skill_search'];
const MCP_REMOTE = join(here, 'node_modules/mcp-remote/dist/proxy.js');

const alphaFiles = {
  'agent.yaml': 'name: alpha\ntype: predefined\n',
  'AGENTS.md': '# Agents\n\nBe brief.\n',
  'SOUL.md': '# Soul\n\nCalm and exact. SOUL-ONE\n',
  'USER.md': '# User\n\nShared default.\n',
  'MEMORY.md': '# Memory\n\nThe wifi password is on the fridge. ALPHA-SECRET\n',
  'users/alice/MEMORY.md': '# Memory\n\nAlice drinks green tea every morning. ALICE-MARK\n',
  'users/alice/USER.md': '# User\n\nAlice, a gardener.\n',
  'users/bob/MEMORY.md': '# Memory\n\nBob drinks green tea and black coffee. BOB-MARK\n',
  'users/bob/USER.md': '# User\n\nBob, a baker. BOB-MARK\n',
  'skills/greeting/SKILL.md': '---\nname: greeting\ndescription: Greet a guest warmly at the front desk.\n---\nSay hello. Files in {baseDir}.\n',
};
const betaFiles = {
  'agent.yaml': 'name: beta\n',
  'SOUL.md': '# Soul\n\nBeta. BETA-SECRET\n',
  'MEMORY.md': '# Memory\n\nThe wifi password is BETA-SECRET.\n',
};

let failures = 0;
let passed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (err) {
    failures++;
    console.log(`not ok - ${name}\n  ${String(err && err.stack || err).split('\n').join('\n  ')}`);
  }
}

// The daemon keeps its git token in its state directory; git gets it from
// `quire git-credential`, as the README sets it up.
let stateDir = '';
const gitEnv = () => ({ ...process.env, XDG_STATE_HOME: stateDir, GIT_AUTHOR_NAME: 'Tester', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Tester', GIT_COMMITTER_EMAIL: 't@example.com', GIT_TERMINAL_PROMPT: '0' });
const git = (cwd, ...args) => execFileSync('git', ['-c', 'credential.helper=', '-c', `credential.helper=!"${QUIRE}" git-credential`, ...args],
  { cwd, env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'] }).toString();

function writeTree(dir, files) {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
}

function newWorkTree(root, name, files) {
  const dir = join(root, 'work-' + name);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeTree(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'workspace');
  return dir;
}

// unixFetch is a fetch over the daemon's unix socket, for the SDK's
// transport (it takes any fetch-like function).
function unixFetch(socketPath) {
  return (url, init = {}) => new Promise((resolvePromise, reject) => {
    const u = new URL(url);
    const headers = {};
    new Headers(init.headers || {}).forEach((v, k) => { headers[k] = v; });
    const req = request({ socketPath, path: u.pathname + u.search, method: init.method || 'GET', headers }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        for (const one of [].concat(v)) h.append(k, one);
      }
      const body = res.statusCode === 204 || res.statusCode === 304 ? null : Readable.toWeb(res);
      resolvePromise(new Response(body, { status: res.statusCode, headers: h }));
    });
    req.on('error', reject);
    if (init.signal) {
      const abort = () => req.destroy(new DOMException('aborted', 'AbortError'));
      if (init.signal.aborted) abort();
      init.signal.addEventListener('abort', abort, { once: true });
      req.on('close', () => init.signal.removeEventListener('abort', abort));
    }
    if (init.body) req.write(init.body);
    req.end();
  });
}

async function apiJSON(sock, method, path, body) {
  const res = await unixFetch(sock)('http://quire' + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function waitFor(what, cond, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await cond()) return;
    } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// startDaemon runs `quire serve` and reads the addresses it listens on
// from its JSON log.
async function startDaemon(root) {
  stateDir = join(root, 'state');
  const tokens = join(root, 'tokens');
  writeFileSync(tokens, 'tok-alpha alpha\ntok-beta beta\n');
  const sock = join(root, 'q.sock');
  const proc = spawn(QUIRE, ['serve', '--repos', join(root, 'repos'), '--allow-create', '--git-listen', '127.0.0.1:0', '--socket', sock,
    '--api-listen', '127.0.0.1:0', '--token-file', tokens, '--cache-dir', join(root, 'cache')], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: root, XDG_STATE_HOME: stateDir } });
  const addrs = {};
  let log = '';
  proc.stderr.on('data', (b) => {
    log += b.toString();
    for (const line of log.split('\n')) {
      try {
        const e = JSON.parse(line);
        if (e.msg === 'listening' && e.server === 'git') addrs.git = e.addr;
        if (e.msg === 'listening' && e.server === 'api (tcp)') addrs.api = e.addr;
      } catch { /* a partial line */ }
    }
  });
  try {
    await waitFor('the daemon to listen', () => addrs.git && addrs.api);
  } catch (err) {
    proc.kill('SIGTERM');
    throw new Error(`${err.message}; its log:\n${log}`);
  }
  return { proc, sock, addrs, log: () => log };
}

async function connect(transport, onUpdated) {
  const client = new Client({ name: 'quire-ts-test', version: '0.0.0' });
  if (onUpdated) client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => onUpdated(n.params.uri));
  await client.connect(transport);
  return client;
}

function text(res) {
  return res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
}

async function callOK(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name}: ${text(res)}`);
  return JSON.parse(text(res));
}

async function main() {
  const root = mkdtempSync(join(tmpdir(), 'quire-mcp-'));
  const d = await startDaemon(root);
  try {
    await run(root, d);
  } finally {
    // Whatever happened, the daemon stops and its files go.
    d.proc.kill('SIGTERM');
    await new Promise((r) => (d.proc.exitCode !== null ? r() : d.proc.on('exit', r)));
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failures} failed`);
  if (failures > 0) {
    process.exitCode = 1;
  }
}

async function run(root, d) {
  const remote = `http://${d.addrs.git}`;
  const alphaDir = newWorkTree(root, 'alpha', alphaFiles);
  const betaDir = newWorkTree(root, 'beta', betaFiles);
  git(alphaDir, 'push', '-q', `${remote}/alpha.git`, 'main');
  git(betaDir, 'push', '-q', `${remote}/beta.git`, 'main');
  const indexed = async () => {
    const st = await apiJSON(d.sock, 'GET', '/v1/status');
    return ['alpha', 'beta'].every((n) => st.agents.some((a) => a.name === n && a.deployed_commit && a.indexed_commit === a.deployed_commit));
  };
  await waitFor('both agents to be indexed', indexed);

  const transports = {
    'streamable HTTP on the unix socket': () => new StreamableHTTPClientTransport(new URL('http://quire/mcp?agent=alpha&user=alice'), { fetch: unixFetch(d.sock) }),
    'streamable HTTP on --api-listen with a token': () => new StreamableHTTPClientTransport(new URL(`http://${d.addrs.api}/mcp?agent=alpha&user=alice`),
      { requestInit: { headers: { Authorization: 'Bearer tok-alpha' } } }),
    'stdio (quire mcp)': () => new StdioClientTransport({ command: QUIRE, args: ['mcp', '--socket', d.sock, '--agent', 'alpha', '--user', 'alice'], stderr: 'inherit' }),
  };

  const sessions = [];
  let soul = 1;
  for (const [name, make] of Object.entries(transports)) {
    const updates = [];
    let client;
    await check(`${name}: initialize`, async () => {
      client = await connect(make(), (uri) => updates.push(uri));
      const caps = client.getServerCapabilities();
      assert.ok(caps.tools && caps.prompts && caps.resources && caps.resources.subscribe, JSON.stringify(caps));
      assert.equal(client.getServerVersion().name, 'quire');
    });
    if (!client) continue;
    sessions.push(client);
    await check(`${name}: list tools`, async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.ok(t.description.includes('alpha') && t.description.length > 80, t.name + ': ' + t.description);
        assert.ok(Object.values(t.inputSchema.properties).every((p) => p.description), t.name + ' has undocumented arguments');
      }
    });
    await check(`${name}: get the prompt, equal to the API's`, async () => {
      const got = await client.getPrompt({ name: 'system_prompt', arguments: { session: 'main', channel: 'dm' } });
      const api = await apiJSON(d.sock, 'POST', '/v1/agents/alpha/prompt', { user: 'alice', session: 'main', channel: 'dm' });
      assert.equal(got.messages.length, 1);
      assert.equal(got.messages[0].content.text, api.prompt);
    });
    await check(`${name}: call every tool`, async () => {
      const found = await callOK(client, 'memory_search', { query: 'what does alice drink in the morning', limit: 3 });
      assert.ok(found.hits.length > 0 && found.hits[0].text.includes('ALICE-MARK'), JSON.stringify(found));
      assert.ok(['path', 'start_line', 'end_line', 'score', 'text', 'scope'].every((k) => k in found.hits[0]));
      const got = await callOK(client, 'memory_get', { path: 'MEMORY.md', scope: 'agent' });
      assert.ok(got.text.includes('ALPHA-SECRET') && got.etag, JSON.stringify(got));
      const appended = await callOK(client, 'memory_append', { text: `Alice asked for oat milk (${name}).` });
      assert.match(appended.path, /^users\/alice\/memory\/\d{4}-\d{2}-\d{2}\.md$/);
      const wrote = await callOK(client, 'memory_write', { path: 'MEMORY.md', scope: 'agent', if_match: got.etag, content: got.text + `\nNoted over ${name}.\n` });
      assert.ok(wrote.commit && wrote.etag);
      const stale = await client.callTool({ name: 'memory_write', arguments: { path: 'MEMORY.md', scope: 'agent', if_match: got.etag, content: 'x\n' } });
      assert.ok(stale.isError);
      assert.equal(JSON.parse(text(stale)).error.code, 'stale');
      const skills = await callOK(client, 'skill_search', { query: 'greet a guest' });
      assert.equal(skills.skills[0].name, 'greeting');
      const skill = await callOK(client, 'skill_get', { name: 'greeting' });
      assert.ok(skill.body.startsWith('Say hello.') && !skill.body.includes('{baseDir}'), skill.body);
    });
    await check(`${name}: read a resource`, async () => {
      const { resources } = await client.listResources();
      const uris = resources.map((r) => r.uri);
      assert.ok(uris.includes('quire://alpha/SOUL.md') && uris.includes('quire://alpha/users/alice/MEMORY.md'), uris.join(' '));
      assert.ok(!uris.some((u) => u.includes('/users/bob/')), uris.join(' '));
      const res = await client.readResource({ uri: 'quire://alpha/users/alice/USER.md' });
      assert.equal(res.contents[0].text, alphaFiles['users/alice/USER.md']);
    });
    await check(`${name}: a change notification after a push`, async () => {
      await client.subscribeResource({ uri: 'quire://alpha/SOUL.md' });
      // What is deployed is live: main merged with the agents' writes.
    git(alphaDir, 'pull', '-q', '--rebase', `${remote}/alpha.git`, 'live');
      soul++;
      writeTree(alphaDir, { 'SOUL.md': `# Soul\n\nCalm and exact. SOUL-${soul}\n` });
      git(alphaDir, 'commit', '-q', '-am', `soul ${soul}`);
      git(alphaDir, 'push', '-q', `${remote}/alpha.git`, 'main');
      await waitFor('resources/updated for quire://alpha/SOUL.md', () => updates.includes('quire://alpha/SOUL.md'), 15000);
      const res = await client.readResource({ uri: 'quire://alpha/SOUL.md' });
      assert.ok(res.contents[0].text.includes(`SOUL-${soul}`));
    });
  }

  await check('the MCP prompt equals `quire prompt` of the same commit', async () => {
    await waitFor('alpha to be indexed', indexed);
    // What is deployed is live: main merged with the agents' writes.
    git(alphaDir, 'pull', '-q', '--rebase', `${remote}/alpha.git`, 'live');
    const cli = execFileSync(QUIRE, ['prompt', '--dir', alphaDir, '--user', 'alice'], { env: { ...process.env, HOME: root, XDG_CONFIG_HOME: join(root, '.config') } }).toString();
    const got = await sessions[0].getPrompt({ name: 'system_prompt', arguments: {} });
    assert.equal(got.messages[0].content.text, cli);
  });

  await check('a token for alpha cannot open a session of beta', async () => {
    const t = new StreamableHTTPClientTransport(new URL(`http://${d.addrs.api}/mcp?agent=beta`), { requestInit: { headers: { Authorization: 'Bearer tok-alpha' } } });
    await assert.rejects(connect(t), /403|forbidden/i);
  });
  await check('a token for alpha lists and calls only alpha\'s tools', async () => {
    const c = await connect(new StreamableHTTPClientTransport(new URL(`http://${d.addrs.api}/mcp`), { requestInit: { headers: { Authorization: 'Bearer tok-alpha' } } }));
    sessions.push(c);
    const { tools } = await c.listTools();
    assert.ok(tools.every((t) => !t.description.includes('beta')));
    const res = await c.callTool({ name: 'memory_search', arguments: { query: 'wifi password', limit: 10 } });
    assert.ok(text(res).includes('ALPHA-SECRET') && !text(res).includes('BETA-SECRET'), text(res));
  });
  await check('user alice never sees user bob\'s memory through any tool', async () => {
    const c = sessions[0];
    const calls = [
      ['memory_search', { query: 'black coffee baker BOB-MARK', limit: 50 }],
      ['memory_get', { path: 'users/bob/MEMORY.md', scope: 'agent' }],
      ['memory_get', { path: 'memory/../users/bob/MEMORY.md' }],
      ['memory_write', { path: 'users/bob/MEMORY.md', content: 'x', if_match: '*', scope: 'agent' }],
      ['skill_search', { query: 'bob' }],
      ['skill_get', { name: '../users/bob' }],
    ];
    for (const [name, args] of calls) {
      const res = await c.callTool({ name, arguments: args });
      assert.ok(!text(res).includes('BOB-MARK'), `${name} ${JSON.stringify(args)}: ${text(res)}`);
    }
    await assert.rejects(c.readResource({ uri: 'quire://alpha/users/bob/MEMORY.md' }));
    await assert.rejects(c.getPrompt({ name: 'system_prompt', arguments: { user: 'bob' } }));
  });

  // mcp-remote keeps what it learns of OAuth under its config directory.
  const bridge = (token) => new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, `http://${d.addrs.api}/mcp?agent=alpha&user=alice`, '--header', `Authorization: Bearer ${token}`],
    env: { ...process.env, HOME: root, MCP_REMOTE_CONFIG_DIR: join(root, 'mcp-auth') },
    stderr: 'pipe',
  });
  await check('mcp-remote with a token bridges --api-listen', async () => {
    const c = await connect(bridge('tok-alpha'));
    sessions.push(c);
    const { tools } = await c.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const found = await callOK(c, 'memory_search', { query: 'what does alice drink in the morning', limit: 3 });
    assert.ok(found.hits.length > 0 && found.hits[0].text.includes('ALICE-MARK'), JSON.stringify(found));
  });
  await check('mcp-remote with a wrong token shows Quire\'s message', async () => {
    const t = bridge('wrong');
    let said = '';
    t.stderr.on('data', (b) => { said += b.toString(); });
    await assert.rejects(connect(t));
    // Without an authorization server in the resource metadata it falls
    // back to registering a client at the origin: that answer says how
    // to authenticate.
    assert.match(said, /send the header Authorization: Bearer <token> with a token from the daemon's --token-file/, said);
    assert.doesNotMatch(said, /no route POST/, said);
  });

  for (const c of sessions) await c.close().catch(() => {});
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
