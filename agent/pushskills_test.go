package agent_test

import (
	"context"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/agent"
)

// A push's check reads the SKILL.md files of the skills it changes and no
// other: an error in a changed skill refuses it, an untouched skill is
// not read (the tree before the push passed the same check).
func TestPushChecksChangedSkillsOnly(t *testing.T) {
	const good = "---\nname: %s\ndescription: Does %s.\n---\nSteps.\n"
	const broken = "---\nname: [unclosed\n---\nSteps.\n"
	files := map[string]string{
		"bot/agent.yaml": "name: bot\n",
		"bot/SOUL.md":    "# Soul\n",
	}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		files["bot/skills/"+name+"/SKILL.md"] = strings.ReplaceAll(good, "%s", name)
	}
	check := agent.WorkspaceChecks(agent.CheckOptions{})
	for _, tt := range []struct {
		name      string
		broken    string // a skill written broken
		paths     []string
		refused   bool
		readSkill []string // the SKILL.md files the check may read
	}{
		{"one good skill changed", "", []string{"bot/skills/beta/SKILL.md"}, false, []string{"beta"}},
		{"a changed skill is broken", "beta", []string{"bot/skills/beta/SKILL.md"}, true, []string{"beta"}},
		{"a broken skill the push does not change", "gamma", []string{"bot/skills/beta/SKILL.md"}, false, []string{"beta"}},
		{"no skill changed", "", []string{"bot/SOUL.md"}, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree := fstest.MapFS{}
			for p, c := range files {
				tree[p] = &fstest.MapFile{Data: []byte(c)}
			}
			if tt.broken != "" {
				tree["bot/skills/"+tt.broken+"/SKILL.md"] = &fstest.MapFile{Data: []byte(broken)}
			}
			reads := &openLog{FS: tree}
			got := check(context.Background(), "refs/heads/main", reads, tt.paths)
			if (len(got) > 0) != tt.refused {
				t.Errorf("problems %v, want refused=%v", got, tt.refused)
			}
			for _, name := range reads.skillsRead() {
				if !strings.Contains(strings.Join(tt.readSkill, " "), name) {
					t.Errorf("read the SKILL.md of %q, which the push does not change", name)
				}
			}
		})
	}
}

// openLog is an fs.FS that records the files opened through it.
type openLog struct {
	fs.FS
	mu     sync.Mutex
	opened []string
}

func (o *openLog) Open(name string) (fs.File, error) {
	o.mu.Lock()
	o.opened = append(o.opened, name)
	o.mu.Unlock()
	return o.FS.Open(name)
}

// skillsRead names the skills whose SKILL.md was opened.
func (o *openLog) skillsRead() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, p := range o.opened {
		if rest, ok := strings.CutPrefix(p, "bot/skills/"); ok && strings.HasSuffix(p, "/SKILL.md") {
			out = append(out, strings.TrimSuffix(rest, "/SKILL.md"))
		}
	}
	return out
}
