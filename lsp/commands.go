package lsp

// Command ids the server executes (workspace/executeCommand). All of them
// are listed in executeCommandProvider.
const (
	// CommandPreviewPrompt assembles the system prompt for (agent, user,
	// session, channel) from the editor's view of the workspace and returns
	// it with its budget report.
	CommandPreviewPrompt = "quire.previewPrompt"
)

var commands = []string{CommandPreviewPrompt}
