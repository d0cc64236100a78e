// Quire's local API against tools nobody here wrote:
//   1. Redocly lints daemon/api/openapi.json (recommended-strict rules);
//   2. a daemon (QUIRE, default ../../../../bin/quire) serves a small
//      workspace on --api-listen with a token and a webhook secret;
//   3. openapi-typescript generates types from the openapi.json that
//      daemon serves (fetched without a token), tsc --strict compiles
//      client.ts against them, and the compiled client drives every route.
//
// Run from the repository root:
//   go build -o bin/quire ./cmd/quire
//   cd daemon/api/testdata/openapi-client && npm ci --no-audit --no-fund && npm test
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const QUIRE = resolve(process.env.QUIRE || join(here, '../../../../bin/quire'));
const bin = (name) => join(here, 'node_modules', '.bin', name);
const quiet = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: here, env: quiet, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

const started = Date.now();
let failures = 0;
let passed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (err) {
    failures++;
    console.log(`not ok - ${name}\n  ${String((err && err.stack) || err).split('\n').join('\n  ')}`);
  }
}

await check('redocly lint (recommended-strict)', async () => {
  try {
    run(bin('redocly'), ['lint', '--config', 'redocly.yaml', '--format', 'stylish', '../../openapi.json']);
  } catch (err) {
    throw new Error(`${err.stdout}${err.stderr}`);
  }
});

const bot = {
  'agent.yaml': 'name: bot\ntype: predefined\n',
  'AGENTS.md': '# Agents\n\nBe brief.\n',
  'SOUL.md': '# Soul\n\nCalm and exact. MARKER-ONE\n',
  'MEMORY.md': '# Memory\n\nThe wifi password is on the fridge.\n',
  'skills/greeting/SKILL.md': '---\nname: greeting\ndescription: Greet a guest warmly at the front desk.\n---\nSay hello. Files in {baseDir}.\n',
};
const tmp = mkdtempSync(join(tmpdir(), 'quire-openapi-'));
const ws = join(tmp, 'bot');
for (const [name, content] of Object.entries(bot)) {
  mkdirSync(dirname(join(ws, name)), { recursive: true });
  writeFileSync(join(ws, name), content);
}
writeFileSync(join(tmp, 'tokens'), 'tok-openapi *\n');
writeFileSync(join(tmp, 'hook-secret'), 'hook-secret\n');

const port = await new Promise((res) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); });
});
const base = `http://127.0.0.1:${port}`;
const env = { ...process.env, HOME: tmp, XDG_CACHE_HOME: join(tmp, 'cache'), XDG_STATE_HOME: join(tmp, 'state'),
  XDG_CONFIG_HOME: join(tmp, 'config'), XDG_RUNTIME_DIR: join(tmp, 'run') };
const daemon = spawn(QUIRE, ['serve', '--dir', ws, '--api-listen', `127.0.0.1:${port}`, '--token-file', join(tmp, 'tokens'),
  '--webhook-secret-file', join(tmp, 'hook-secret')], { env, stdio: ['ignore', 'ignore', 'pipe'] });
let log = '';
daemon.stderr.on('data', (b) => { log += b; });
const exited = new Promise((res) => daemon.on('exit', res));

try {
  let up = false;
  for (let i = 0; i < 200 && !up; i++) {
    up = await fetch(`${base}/v1/openapi.json`).then((r) => r.ok, () => false);
    if (!up) await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) throw new Error(`the daemon did not answer on ${base} within 20 s:\n${log}`);
  await check('openapi-typescript from the served document, tsc --strict', async () => {
    try {
      run(bin('openapi-typescript'), [`${base}/v1/openapi.json`, '-o', 'gen/api.d.ts']);
      run(bin('tsc'), ['-p', '.']);
    } catch (err) {
      throw new Error(`${err.stdout}${err.stderr}`);
    }
  });
  if (failures === 0) {
    const { exercise } = await import(pathToFileURL(join(here, 'out', 'client.js')).href);
    await exercise(base, 'tok-openapi', 'hook-secret', check);
  }
} finally {
  daemon.kill('SIGTERM');
  await exited;
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failures} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (failures > 0) {
  console.log(`daemon log:\n${log.slice(-4000)}`);
  process.exit(1);
}
