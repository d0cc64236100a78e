package daemon

import (
	"errors"
	"strings"
	"testing"
)

// progress answers from the runs recorded: done once every agent of the
// deployment is indexed at its commit, not when one was indexed at
// another commit since, and a failed run of the commit is reported even
// while others are still to come.
func TestIndexProgress(t *testing.T) {
	dep := &deployment{commit: "c1", names: []string{"a", "b", "c"}}
	now := func() *deployment { return dep }
	type step struct {
		run      indexRun
		done     bool
		failedOn string // agent named by the failure ("" for none)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"indexed one by one", []step{
			{indexRun{agent: "a", commit: "c1", indexed: "c1"}, false, ""},
			{indexRun{agent: "a", commit: "c1", indexed: "c1"}, false, ""}, // the same agent twice counts once
			{indexRun{agent: "b", commit: "c1", indexed: "c1"}, false, ""},
			{indexRun{agent: "c", commit: "c1", indexed: "c1"}, true, ""},
		}},
		{"one moved on to a newer commit", []step{
			{indexRun{agent: "a", commit: "c1", indexed: "c1"}, false, ""},
			{indexRun{agent: "b", commit: "c1", indexed: "c1"}, false, ""},
			{indexRun{agent: "c", commit: "c1", indexed: "c1"}, true, ""},
			{indexRun{agent: "b", commit: "c1", indexed: "c2"}, false, ""},
			{indexRun{agent: "b", commit: "c1", indexed: "c1"}, true, ""},
		}},
		{"a failed run", []step{
			{indexRun{agent: "a", commit: "c1", indexed: "c1"}, false, ""},
			{indexRun{agent: "b", commit: "c1", err: errors.New("disk full")}, false, "b"},
			{indexRun{agent: "b", commit: "c1", indexed: "c1"}, false, ""},
			{indexRun{agent: "c", commit: "c1", indexed: "c1"}, true, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ix indexState
			if done, failed, _ := ix.progress(dep); done || failed != nil {
				t.Fatalf("before any run: done %v, failed %v", done, failed)
			}
			for i, st := range tc.steps {
				ix.ran(st.run, now)
				done, failed, _ := ix.progress(dep)
				if done != st.done {
					t.Errorf("step %d (%s at %s): done %v, want %v", i, st.run.agent, st.run.indexed, done, st.done)
				}
				switch {
				case st.failedOn == "" && failed != nil:
					t.Errorf("step %d: failed %v, want none", i, failed)
				case st.failedOn != "" && (failed == nil || !strings.Contains(failed.Error(), "agent "+st.failedOn+" ")):
					t.Errorf("step %d: failed %v, want agent %s's failure", i, failed, st.failedOn)
				}
			}
		})
	}
}
