// The Quire extension: starts `quire lsp`, shows the assembled system
// prompt in a read-only quire-prompt: document that follows your edits, and
// the agent's total budget use in the status bar. All logic that is not
// VS Code glue lives in model.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import {
  CHANNELS, PREVIEW_COMMAND, PREVIEW_SCHEME, PreviewParams, PreviewResult, SESSIONS,
  ServerChoice, bundledBinary, chooseServer, debounce, describeServer, parsePreviewQuery, previewUri, statusText, usersIn,
} from './model';

let client: LanguageClient | undefined;
/** Why the server is not running, when it is not: shown in the preview. */
let notRunning = 'Quire: the language server has not started yet.';

async function runPreview(params: PreviewParams): Promise<PreviewResult> {
  if (!client) throw new Error(notRunning);
  return client.sendRequest(ExecuteCommandRequest.type, { command: PREVIEW_COMMAND, arguments: [params] }) as Promise<PreviewResult>;
}

/** Serves quire-prompt: documents from the language server. */
class PreviewProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    try {
      return (await runPreview(parsePreviewQuery(uri.query))).prompt;
    } catch (err) {
      if (!client) return `${notRunning}\n`;
      return `Quire could not assemble this prompt:\n\n${err instanceof Error ? err.message : String(err)}\n`;
    }
  }

  /** refresh re-renders every open preview (they follow unsaved edits). */
  refresh(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === PREVIEW_SCHEME) this.changed.fire(doc.uri);
    }
  }
}

async function showPreview(params: PreviewParams): Promise<void> {
  if (!params.agent && client) {
    // The tab names the agent: ask the server which one the document is of.
    try {
      params = { ...params, agent: (await runPreview(params)).report.agent };
    } catch {
      // The preview tab shows the error.
    }
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(previewUri(params)));
  await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
}

async function pickAndPreview(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const uri = editor && editor.document.uri.scheme === 'file' ? editor.document.uri.toString() : undefined;
  const session = await vscode.window.showQuickPick([...SESSIONS], { title: 'Quire: session', placeHolder: 'main' });
  if (!session) return;
  let channel: string | undefined = 'dm';
  if (session === 'main') {
    channel = await vscode.window.showQuickPick([...CHANNELS], { title: 'Quire: channel', placeHolder: 'dm' });
    if (!channel) return;
  }
  const files = await vscode.workspace.findFiles('**/users/*/*.md', '**/node_modules/**', 500);
  const users = usersIn(files.map((f) => vscode.workspace.asRelativePath(f, false)));
  const none = '(no user: agent-level files)';
  const user = await vscode.window.showQuickPick([none, ...users], { title: 'Quire: user' });
  if (!user) return;
  await showPreview({ session, channel, user: user === none ? undefined : user, uri });
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** makeExecutable restores the executable bit of the bundled binary if
 * the install lost it (VS Code keeps the package's modes; this is a
 * fallback), on systems that have one. */
function makeExecutable(p: string): void {
  if (process.platform === 'win32' || !fs.existsSync(p) || isExecutable(p)) return;
  try {
    fs.chmodSync(p, 0o755);
  } catch {
    // chooseServer falls back to PATH.
  }
}

/** serverCommand is the quire binary to run (quire.path, the bundled
 * binary, or PATH), or a message saying why there is none. */
function serverCommand(extensionPath: string): ServerChoice {
  const config = vscode.workspace.getConfiguration('quire');
  const set = config.inspect<string>('path');
  const configured = set?.workspaceFolderValue ?? set?.workspaceValue ?? set?.globalValue;
  const windows = process.platform === 'win32';
  const bundled = bundledBinary(extensionPath, process.platform, path.sep);
  makeExecutable(bundled);
  return chooseServer({
    configured, bundled, pathEnv: process.env.PATH, isExecutable,
    delimiter: path.delimiter, extensions: windows ? ['.exe', ''] : [''],
  });
}

/** setPath asks for the quire binary and stores it in quire.path. */
async function setPath(): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: true, canSelectFolders: false, canSelectMany: false,
    openLabel: 'Use this quire binary', title: 'Quire: the quire binary',
  });
  if (picked && picked[0]) {
    await vscode.workspace.getConfiguration('quire').update('path', picked[0].fsPath, vscode.ConfigurationTarget.Global);
  }
}

const SET_PATH = 'Set quire.path…';
const OPEN_SETTINGS = 'Open Settings';

/** explain shows why the server is not running, with what to do. */
async function explain(message: string): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, SET_PATH, OPEN_SETTINGS);
  if (choice === SET_PATH) await setPath();
  if (choice === OPEN_SETTINGS) await vscode.commands.executeCommand('workbench.action.openSettings', 'quire.path');
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const preview = new PreviewProvider();
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.name = 'Quire budget';
  const output = vscode.window.createOutputChannel('Quire');
  /** Which binary runs, for the status item's tooltip. */
  let serverLine = '';

  const startClient = async (): Promise<void> => {
    const found = serverCommand(context.extensionPath);
    if ('missing' in found) {
      notRunning = found.missing;
      output.appendLine(notRunning);
      status.text = '$(warning) Quire: no quire binary';
      status.tooltip = notRunning;
      status.command = 'quire.setPath';
      status.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      status.show();
      preview.refresh();
      void explain(notRunning);
      return;
    }
    serverLine = describeServer(found);
    output.appendLine(`Starting ${serverLine}`);
    const serverOptions: ServerOptions = { command: found.command, args: ['lsp'] };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'markdown' },
        { scheme: 'file', pattern: '**/agent.yaml' },
      ],
      // VS Code outlines and folds Markdown itself: the server's outline
      // would list every heading twice and add a "Quire" level to the
      // breadcrumbs.
      initializationOptions: { outline: false },
      outputChannel: output,
      middleware: {
        // A code lens "Preview prompt" runs the server command; show its
        // answer instead of dropping it.
        executeCommand: async (cmd, args, next) => {
          if (cmd === PREVIEW_COMMAND) {
            await showPreview((args[0] ?? {}) as PreviewParams);
            return undefined;
          }
          return next(cmd, args);
        },
      },
    };
    const c = new LanguageClient('quire', 'Quire', serverOptions, clientOptions);
    try {
      await c.start();
    } catch (err) {
      notRunning = `Quire: ${serverLine} did not start: ${err instanceof Error ? err.message : String(err)}. ` +
        'Set quire.path to a working quire binary.';
      output.appendLine(notRunning);
      status.text = '$(warning) Quire: server not running';
      status.tooltip = notRunning;
      status.command = 'quire.setPath';
      status.show();
      preview.refresh();
      void explain(notRunning);
      return;
    }
    client = c;
    status.command = 'quire.showPreview';
    status.backgroundColor = undefined;
    preview.refresh();
    updateStatus();
  };

  const stopClient = async (): Promise<void> => {
    const c = client;
    client = undefined;
    notRunning = 'Quire: the language server is restarting.';
    await c?.stop();
  };

  const updateStatus = debounce(async () => {
    const editor = vscode.window.activeTextEditor;
    if (!client) return; // the status item says why
    if (!editor || editor.document.uri.scheme !== 'file') {
      status.hide();
      return;
    }
    try {
      const res = await runPreview({ uri: editor.document.uri.toString() });
      const s = statusText(res.report, serverLine);
      status.text = s.text;
      status.tooltip = s.tooltip;
      status.backgroundColor = s.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
      status.show();
    } catch {
      status.hide(); // not in a Quire workspace, or no single agent
    }
  }, 300);
  const refreshPreviews = debounce(() => preview.refresh(), 300);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, preview),
    vscode.commands.registerCommand('quire.showPreview', pickAndPreview),
    vscode.commands.registerCommand('quire.setPath', async () => {
      if (client) {
        await setPath();
      } else {
        await explain(notRunning);
      }
    }),
    vscode.commands.registerCommand('quire.restartServer', async () => {
      await stopClient();
      await startClient();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('quire.path')) {
        await stopClient();
        await startClient();
      }
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.scheme === PREVIEW_SCHEME) return;
      refreshPreviews();
      updateStatus();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
    status,
    output,
  );
  await startClient();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
