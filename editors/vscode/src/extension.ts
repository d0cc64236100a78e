// The Quire extension: starts `quire lsp`, shows the assembled system
// prompt in a read-only quire-prompt: document that follows your edits, and
// the agent's total budget use in the status bar. All logic that is not
// VS Code glue lives in model.ts.
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import {
  CHANNELS, PREVIEW_COMMAND, PREVIEW_SCHEME, PreviewParams, PreviewResult, SESSIONS,
  debounce, parsePreviewQuery, previewUri, statusText, usersIn,
} from './model';

let client: LanguageClient | undefined;

async function runPreview(params: PreviewParams): Promise<PreviewResult> {
  if (!client) throw new Error('the Quire language server is not running');
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

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('quire');
  const command = config.get<string>('path') || 'quire';
  const serverOptions: ServerOptions = { command, args: ['lsp'] };
  const preview = new PreviewProvider();
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'markdown' },
      { scheme: 'file', pattern: '**/agent.yaml' },
    ],
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
  client = new LanguageClient('quire', 'Quire', serverOptions, clientOptions);

  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = 'quire.showPreview';
  const updateStatus = debounce(async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== 'file' || !client) {
      status.hide();
      return;
    }
    try {
      const res = await runPreview({ uri: editor.document.uri.toString() });
      const s = statusText(res.report);
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
    vscode.commands.registerCommand('quire.restartServer', async () => client?.restart()),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.scheme === PREVIEW_SCHEME) return;
      refreshPreviews();
      updateStatus();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
    status,
  );
  await client.start();
  updateStatus();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
