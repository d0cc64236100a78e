package lsp

import (
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// errInvalidAgent marks a preview of an agent whose agent.yaml has errors:
// the push would be refused, so there is no prompt it would serve.
var errInvalidAgent = errors.New("invalid agent")

// codeRequestFailed is LSP's RequestFailed: the request was well formed,
// but what it asks for cannot be done.
const codeRequestFailed jsonrpc2.Code = -32803

// invalidAgent returns the error of previewing a, when its agent.yaml has
// errors: the findings the push's validation (agent.Check) reports, in
// its words, instead of a prompt built from the defaults.
func invalidAgent(a *prompt.Agent) error {
	var found []string
	for _, p := range a.Problems {
		if p.Severity == workspace.SeverityError {
			found = append(found, p.String())
		}
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("%w %q: a push would be refused, so no prompt is previewed; fix agent.yaml: %s",
		errInvalidAgent, a.Name, strings.Join(found, "; "))
}
