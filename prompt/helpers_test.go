package prompt

import (
	"testing"
	"testing/fstest"
)

// openMap opens a one-agent workspace made of files (relative to the agent
// directory "a") and an agent.yaml.
func openMap(t testing.TB, files map[string]string, agentYAML string) *Workspace {
	t.Helper()
	fsys := fstest.MapFS{"a/agent.yaml": {Data: []byte(agentYAML)}}
	for name, content := range files {
		fsys["a/"+name] = &fstest.MapFile{Data: []byte(content)}
	}
	w, err := Open(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func assemble(t testing.TB, w *Workspace, req Request) Result {
	t.Helper()
	res, err := w.Assemble(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
