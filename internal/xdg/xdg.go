// Package xdg owns where Quire keeps its own files on a machine, after the
// XDG base directory specification: the cache (tokenizer, embeddings), the
// configuration file, state and the runtime directory of the daemon's
// socket. getenv reads the environment (os.Getenv, or a test's).
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheDir is $XDG_CACHE_HOME/quire, or ~/.cache/quire; "" when neither
// variable is set.
func CacheDir(getenv func(string) string) string { return baseDir(getenv, "XDG_CACHE_HOME", ".cache") }

// ConfigDir is $XDG_CONFIG_HOME/quire, or ~/.config/quire; "" when neither
// variable is set.
func ConfigDir(getenv func(string) string) string {
	return baseDir(getenv, "XDG_CONFIG_HOME", ".config")
}

// StateDir is $XDG_STATE_HOME/quire, or ~/.local/state/quire; "" when
// neither variable is set.
func StateDir(getenv func(string) string) string {
	return baseDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// RuntimeDir is $XDG_RUNTIME_DIR/quire, or quire-<uid> in the temporary
// directory when XDG_RUNTIME_DIR is not set.
func RuntimeDir(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "quire")
	}
	return PrivateTempDir()
}

// PrivateTempDir is quire-<uid> in the temporary directory; quire on
// Windows, which has no uid (os.Getuid is -1) and whose temporary
// directory is already the user's own.
func PrivateTempDir() string {
	if uid := os.Getuid(); uid >= 0 {
		return filepath.Join(os.TempDir(), fmt.Sprintf("quire-%d", uid))
	}
	return filepath.Join(os.TempDir(), "quire")
}

func baseDir(getenv func(string) string, variable, underHome string) string {
	if d := getenv(variable); d != "" {
		return filepath.Join(d, "quire")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, underHome, "quire")
	}
	return ""
}
