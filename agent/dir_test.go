package agent_test

import (
	"testing"

	"github.com/quirehq/quire/agent"
)

// DirOf finds the agent of a path as prompt.Open finds agents: the
// nearest agent.yaml above it, but never one below a hidden directory,
// node_modules, or the users/, memory/, rooms/ or skills/ of an agent or
// of the root; the root when there is none.
func TestDirOf(t *testing.T) {
	fsys := mapFS(map[string]string{
		"ada/agent.yaml":             "name: ada\n",
		"ada/bots/x/agent.yaml":      "name: x\n",
		"ada/users/bob/agent.yaml":   "name: bob\n",
		"ada/skills/s/agent.yaml":    "name: s\n",
		".hidden/agent.yaml":         "name: h\n",
		"node_modules/y/agent.yaml":  "name: y\n",
		"memory/z/agent.yaml":        "name: z\n",
		"notes/deep/agent.yaml/x.md": "a directory named agent.yaml\n",
	})
	for p, want := range map[string]string{
		"agent.yaml":                         ".",
		"MEMORY.md":                          ".",
		"ada/agent.yaml":                     "ada",
		"ada/memory/2026-01-02.md":           "ada",
		"ada/bots/x/memory/2026-01-02.md":    "ada/bots/x",
		"ada/users/bob/memory/2026-01-02.md": "ada",
		"ada/skills/s/SKILL.md":              "ada",
		".hidden/memory/2026-01-02.md":       ".",
		"node_modules/y/memory/x.md":         ".",
		"memory/z/memory/2026-01-02.md":      ".",
		"notes/memory/2026-01-02.md":         ".",
		"notes/deep/memory/2026-01-02.md":    ".",
	} {
		if got := agent.DirOf(fsys, p); got != want {
			t.Errorf("DirOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// The merge policy knows an agent directory either side of the merge
// has: a person's push that adds ada/agent.yaml with ada's first log
// merges that log with an agent's write of it as a union.
func TestMergeAgentOfEitherSide(t *testing.T) {
	with := mapFS(map[string]string{"ada/agent.yaml": "name: ada\n"})
	without := mapFS(map[string]string{"AGENTS.md": "# Rules\n"})
	const log = "ada/memory/2026-01-02.md"
	if agent.Merge(log, without, with) == nil || agent.Merge(log, with, without) == nil {
		t.Error("a log of an agent one side has does not merge as a union")
	}
	if agent.Merge(log, without, without) != nil {
		t.Error("ada/memory/2026-01-02.md of the root agent merges as a union: it is no log of it")
	}
}
