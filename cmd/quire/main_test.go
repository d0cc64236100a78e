package main

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The scripts (and tests that run this binary as quire) run the real
	// main, signal handling included.
	testscript.Main(m, map[string]func(){"quire": main})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script. $EXAMPLES
// is the bundled example workspace.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("EXAMPLES", examples)
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(e.WorkDir, ".config"))
			// No script may reach a daemon running on this machine.
			e.Setenv("XDG_RUNTIME_DIR", filepath.Join(e.WorkDir, ".run"))
			e.Setenv("GIT_AUTHOR_NAME", "Test")
			e.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			e.Setenv("GIT_COMMITTER_NAME", "Test")
			e.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			return nil
		},
	})
}
