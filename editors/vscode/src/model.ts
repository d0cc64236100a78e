// Pure logic of the extension: no `vscode` import, so `npm test` runs it
// under `node --test`. The language server does the real work; this only
// shapes requests and formats answers.

/** The scheme of the read-only preview documents. */
export const PREVIEW_SCHEME = 'quire-prompt';

/** The server command that assembles a prompt. */
export const PREVIEW_COMMAND = 'quire.previewPrompt';

export const SESSIONS = ['main', 'subagent', 'cron'] as const;
export const CHANNELS = ['dm', 'group'] as const;

/** What a preview shows: the arguments of quire.previewPrompt. */
export interface PreviewParams {
  agent?: string;
  user?: string;
  session?: string;
  channel?: string;
  room?: string;
  /** The document the preview was asked from (selects the agent). */
  uri?: string;
}

/** The parts of the server's report the extension shows. */
export interface Report {
  agent: string;
  user?: string;
  session: string;
  channel: string;
  /** unit is "chars" (the default) or "tokens": then the *_tokens fields hold. */
  budget: { unit?: string; per_file: number; total: number; total_tokens?: number };
  injected_chars: number;
  remaining_chars: number;
  injected_tokens?: number;
  remaining_tokens?: number;
  files: { name: string; status: string; injected_chars: number; original_chars: number }[];
}

export interface PreviewResult {
  prompt: string;
  report: Report;
}

/** previewUri names the preview document for params, e.g.
 * quire-prompt:/concierge%20·%20main%20·%20dm.md?{…}. The query carries the
 * parameters; the path is what the editor tab shows. */
export function previewUri(p: PreviewParams): string {
  const label = [p.agent || 'agent', p.user, p.session || 'main', p.channel || 'dm'].filter(Boolean).join(' · ');
  return `${PREVIEW_SCHEME}:/${encodeURIComponent(label)}.md?${encodeURIComponent(JSON.stringify(clean(p)))}`;
}

/** parsePreviewQuery reads the parameters back from a preview URI's query. */
export function parsePreviewQuery(query: string): PreviewParams {
  try {
    const v = JSON.parse(decodeURIComponent(query));
    return v && typeof v === 'object' ? clean(v as PreviewParams) : {};
  } catch {
    return {};
  }
}

function clean(p: PreviewParams): PreviewParams {
  const out: PreviewParams = {};
  for (const k of ['agent', 'user', 'session', 'channel', 'room', 'uri'] as const) {
    const v = p[k];
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  return out;
}

/** groupThousands formats 24000 as "24,000", as the server does. */
export function groupThousands(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** statusText is the status-bar item for a report: total budget use; the
 * tooltip ends with server, which binary runs, when given. */
export function statusText(r: Report, server?: string): { text: string; tooltip: string; warning: boolean } {
  // A budget in tokens is shown in tokens, as the server reports it.
  const tokens = r.budget.unit === 'tokens';
  const unit = tokens ? 'tokens' : 'chars';
  const total = tokens ? r.budget.total_tokens ?? 0 : r.budget.total;
  const injected = tokens ? r.injected_tokens ?? 0 : r.injected_chars;
  const remaining = tokens ? r.remaining_tokens ?? 0 : r.remaining_chars;
  const pct = total > 0 ? Math.round((injected * 100) / total) : 0;
  const cut = r.files.filter((f) => ['truncated', 'clamped', 'dropped'].includes(f.status));
  const text = `$(book) ${r.agent} ${groupThousands(injected)} / ${groupThousands(total)} (${pct} %)`;
  const lines = [`Quire: ${r.agent} · ${r.session} · ${r.channel}${r.user ? ` · ${r.user}` : ''}`,
    `${groupThousands(injected)} of ${groupThousands(total)} ${unit} of the total budget (${groupThousands(remaining)} left)`];
  for (const f of cut) lines.push(`${f.name}: ${f.status} (${groupThousands(f.injected_chars)} of ${groupThousands(f.original_chars)} chars)`);
  if (server) lines.push(server);
  return { text, tooltip: lines.join('\n'), warning: cut.length > 0 };
}

/** decodeUserDir reverses the server's encoding of user ids into directory
 * names (lower-case letters, digits, - _ . and %XX escapes); undefined for a
 * name the server would not produce. */
export function decodeUserDir(name: string): string | undefined {
  if (!/^([a-z0-9_\-.]|%[0-9A-F]{2})+$/.test(name) || name.startsWith('.')) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '%') {
      bytes.push(parseInt(name.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(name.charCodeAt(i));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** usersIn lists the users whose directories hold files, from workspace-
 * relative slash paths such as "agents/a/users/alice/USER.md". */
export function usersIn(paths: string[]): string[] {
  const users = new Set<string>();
  for (const p of paths) {
    const m = /(?:^|\/)users\/([^/]+)\//.exec(p);
    const id = m && decodeUserDir(m[1]);
    if (id) users.add(id);
  }
  return [...users].sort();
}

/** isQuireDocument tells whether a file belongs to an agent workspace by
 * name: context files, agent.yaml, skills and memory. */
export function isQuireDocument(path: string): boolean {
  const base = path.split('/').pop() || '';
  return base === 'agent.yaml' || base === 'SKILL.md' || /\/memory\/[^/]+\.md$/.test(path) ||
    ['AGENTS.md', 'SOUL.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'USER_PREDEFINED.md', 'HEARTBEAT.md', 'BOOTSTRAP.md', 'MEMORY.md', 'memory.md'].includes(base);
}

/** debounce runs fn once calls have stopped for ms milliseconds. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: A) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** How to get the quire binary when the extension carries none (its
 * universal package): the platform packages carry it; the release archives
 * and a clone of the repository have it too. */
export const INSTALL_HINT =
  'install the Quire extension package for your platform (quire-vscode_<version>_<platform>.vsix carries the binary), ' +
  'or put quire on your PATH from a release archive (see "Install" in Quire\'s README) or with ' +
  '`go install ./cmd/quire` in a clone of the Quire repository';

/** resolveCommand finds the executable `command` names: a path (it has a
 * slash) as it is, a bare name on PATH, as a shell would. isExecutable
 * tells whether a path is an executable file. */
export function resolveCommand(
  command: string, pathEnv: string | undefined, isExecutable: (p: string) => boolean,
  opts: { delimiter?: string; extensions?: string[] } = {},
): string | undefined {
  const exts = opts.extensions ?? [''];
  if (command === '') return undefined;
  if (command.includes('/') || command.includes('\\')) {
    return exts.map((e) => command + e).find(isExecutable);
  }
  for (const dir of (pathEnv ?? '').split(opts.delimiter ?? ':')) {
    if (dir === '') continue;
    const base = dir.endsWith('/') || dir.endsWith('\\') ? dir : `${dir}/`;
    const hit = exts.map((e) => base + command + e).find(isExecutable);
    if (hit) return hit;
  }
  return undefined;
}

/** Where the server binary comes from. */
export type ServerSource = 'quire.path' | 'bundled' | 'PATH';

/** The server to run, or why there is none. */
export type ServerChoice = { command: string; source: ServerSource } | { missing: string };

/** bundledBinary is where a platform package of the extension carries
 * `quire` (bin/quire.exe on Windows); sep joins paths. */
export function bundledBinary(extensionPath: string, platform: string, sep = '/'): string {
  return [extensionPath, 'bin', platform === 'win32' ? 'quire.exe' : 'quire'].join(sep);
}

/** chooseServer picks the quire binary: quire.path when the user set it
 * (a path, or a name looked up on PATH), else the binary bundled with the
 * extension, else `quire` on PATH (the universal package carries none). */
export function chooseServer(o: {
  configured?: string; bundled: string; pathEnv: string | undefined; isExecutable: (p: string) => boolean;
  delimiter?: string; extensions?: string[];
}): ServerChoice {
  const opts = { delimiter: o.delimiter, extensions: o.extensions };
  if (o.configured) {
    const command = resolveCommand(o.configured, o.pathEnv, o.isExecutable, opts);
    return command ? { command, source: 'quire.path' } : { missing: missingBinaryMessage(o.configured, true) };
  }
  if (o.isExecutable(o.bundled)) return { command: o.bundled, source: 'bundled' };
  const command = resolveCommand('quire', o.pathEnv, o.isExecutable, opts);
  return command ? { command, source: 'PATH' } : { missing: missingBinaryMessage('quire', false) };
}

/** describeServer says which binary runs and why, for the output channel
 * and the status item's tooltip. */
export function describeServer(c: { command: string; source: ServerSource }): string {
  switch (c.source) {
    case 'bundled': return `quire lsp: the binary bundled with the extension (${c.command})`;
    case 'quire.path': return `quire lsp: ${c.command} (set in quire.path)`;
    case 'PATH': return `quire lsp: ${c.command} (found on PATH; this extension package carries no binary)`;
  }
}

/** missingBinaryMessage says what is missing and what to do about it;
 * configured is true when the user set quire.path. */
export function missingBinaryMessage(command: string, configured: boolean): string {
  const what = configured
    ? `quire.path is set to "${command}", but that is not an executable file`
    : `this extension package carries no quire binary and quire is not on your PATH`;
  return `Quire: ${what}. Diagnostics, hover and the prompt preview come from \`quire lsp\`: ` +
    `${INSTALL_HINT}; or set quire.path to the binary.`;
}
