// Package draft is what Quire asks a model to write, and the checks its
// answers must pass before anyone sees them as a proposal:
//
//   - Summon: a new agent's files (SOUL.md, IDENTITY.md, AGENTS.md and
//     optionally TOOLS.md, HEARTBEAT.md, agent.yaml) from a description,
//     in one call, as the design's agent summoning does;
//   - Consolidate: an agent's recent daily logs distilled into a new
//     MEMORY.md, as the memory consolidation of the MindRoom proposal.
//
// The model answers each file in a <file path="NAME">…</file> block
// (Parse). Every draft is validated by agent.Check on the tree it would
// make: an answer with errors is refused with the problems listed
// (*InvalidError). A draft is never written anywhere here: the daemon
// and the CLI open it as a proposal branch, and a person decides.
package draft

import (
	"context"

	"github.com/quirehq/quire/llm"
)

// Model is the chat endpoint a draft is asked of (*llm.Client).
type Model interface {
	Complete(ctx context.Context, msgs []llm.Message) (string, error)
}
