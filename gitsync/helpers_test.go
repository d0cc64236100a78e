package gitsync

import (
	"testing"

	"github.com/quirehq/quire/internal/testenv"
)

// The real git CLI and work trees, through the helpers tests share
// (internal/testenv), under this package's names.
var (
	// git runs git in dir and returns its trimmed output.
	git = testenv.Git
	// gitTry runs git and returns its trimmed output and error.
	gitTry = testenv.GitTry
	// writeFiles writes files (path → content) under dir.
	writeFiles = testenv.WriteFiles
)

// newWorkRepo makes a work-tree repository with one commit of files.
func newWorkRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	return testenv.NewWorkTree(t, files, "first")
}

// mustRemote parses raw as a Remote.
func mustRemote(t testing.TB, raw string) Remote {
	t.Helper()
	r, err := ParseRemote(raw)
	if err != nil {
		t.Fatalf("ParseRemote: %v", err)
	}
	return r
}
