package gitsync

import (
	"bytes"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/quirehq/quire/internal/testenv"
)

// TestNotFoundSaysHowToCreate: git shows what the host answers for a
// repository it does not hold. A push says the repository does not exist
// and how to let a push create it; a clone or fetch says it does not exist.
func TestNotFoundSaysHowToCreate(t *testing.T) {
	t.Parallel()
	const missing = `remote: repository "new.git" does not exist on this daemon`
	const howTo = "; a push creates it only when the daemon runs with quire serve --allow-create"
	src := newWorkRepo(t, map[string]string{"AGENTS.md": "a\n"})
	for _, tc := range []struct {
		name        string
		allowCreate bool
		args        func(url string) []string
		want        string
	}{
		{"push", false, func(url string) []string { return []string{"push", url, "main"} }, missing + howTo + "\n"},
		{"clone", false, func(url string) []string { return []string{"clone", "-q", url, t.TempDir()} }, missing + "\n"},
		{"fetch", false, func(url string) []string { return []string{"fetch", url, "main"} }, missing + "\n"},
		{"clone with allow-create", true, func(url string) []string { return []string{"clone", "-q", url, t.TempDir()} }, missing + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHost(t.TempDir(), HostOptions{AllowCreate: tc.allowCreate})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			cmd := exec.Command("git", tc.args(srv.URL+"/new.git")...)
			cmd.Dir = src
			cmd.Env = testenv.GitEnv()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err == nil {
				t.Fatalf("git %s of a missing repository succeeded:\n%s", tc.name, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("git's stderr:\n%s\nwant the line\n%s", stderr.String(), tc.want)
			}
			if tc.name != "push" && strings.Contains(stderr.String(), "--allow-create") {
				t.Errorf("a %s is told about creating by push:\n%s", tc.name, stderr.String())
			}
		})
	}
}
