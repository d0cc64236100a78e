package gitsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckGit reads what git prints as its version and refuses a git
// older than MinGitVersion (2.36), or none.
func TestCheckGit(t *testing.T) {
	for _, tc := range []struct {
		printed string // "" is no git on PATH
		ok      bool
		found   string
	}{
		{"", false, ""},
		{"git version 2.30.2", false, "2.30.2"},
		{"git version 2.35.8", false, "2.35.8"},
		{"git version 1.99.0", false, "1.99.0"},
		{"git version 2.36.0", true, "2.36.0"},
		{"git version 2.39.5", true, "2.39.5"},
		{"git version 2.37.1 (Apple Git-137.1)", true, "2.37.1 (Apple Git-137.1)"},
		{"git version 2.45.0.windows.1", true, "2.45.0.windows.1"},
		{"git version 3.0.0-rc1", true, "3.0.0-rc1"},
		{"hub version 2.14", false, ""},
	} {
		t.Run(tc.printed, func(t *testing.T) {
			dir := t.TempDir()
			if tc.printed != "" {
				if err := os.WriteFile(filepath.Join(dir, "git"), []byte("#!/bin/sh\necho '"+tc.printed+"'\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", dir)
			v, err := CheckGit(context.Background())
			if tc.ok != (err == nil) {
				t.Fatalf("CheckGit with %q: %q %v", tc.printed, v, err)
			}
			if err != nil {
				var ve *GitVersionError
				if !errors.As(err, &ve) || ve.Found != tc.found {
					t.Fatalf("CheckGit with %q: %#v, want found %q", tc.printed, err, tc.found)
				}
				return
			}
			if v != tc.found {
				t.Errorf("version %q, want %q", v, tc.found)
			}
		})
	}
}
