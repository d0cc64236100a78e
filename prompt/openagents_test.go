package prompt_test

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/prompt"
)

// TestOpenManyAgents: a workspace of hundreds of agents (whose agent.yaml
// files Open reads on several goroutines) opens as it does read on one:
// the same agents in the same order, the first directory in walk order
// keeping a name two agents claim, the same problems in the same order.
func TestOpenManyAgents(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 300 {
		name := fmt.Sprintf("a%03d", i)
		switch i {
		case 150, 151: // two more claims on a010
			name = "a010"
		case 200:
			fsys[fmt.Sprintf("agents/d%03d/agent.yaml", i)] = &fstest.MapFile{Data: []byte("name: [unclosed\n")}
			continue
		}
		fsys[fmt.Sprintf("agents/d%03d/agent.yaml", i)] = &fstest.MapFile{Data: []byte("name: " + name + "\n")}
	}
	open := func(procs int) ([]*prompt.Agent, any) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		ws, err := prompt.Open(fsys, prompt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Agents(), ws.Problems()
	}
	one, oneProbs := open(1)
	many, manyProbs := open(4)
	if len(one) != 298 {
		t.Fatalf("%d agents, want 298 (300 less two duplicates)", len(one))
	}
	if !reflect.DeepEqual(one, many) || !reflect.DeepEqual(oneProbs, manyProbs) {
		t.Errorf("agents or problems differ between one goroutine and several:\n%v\n%v", oneProbs, manyProbs)
	}
	if a := one[10]; a.Name != "a010" || a.Dir != "agents/d010" {
		t.Errorf("a010 is %s's, want the first directory's (agents/d010)", a.Dir)
	}
}
