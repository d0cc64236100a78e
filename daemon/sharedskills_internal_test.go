package daemon

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/skills"
)

// countingEmbedder is the builtin embedder counting the texts it embeds.
type countingEmbedder struct {
	memory.Builtin
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Builtin.Embed(ctx, texts)
}

// TestSkillSearchCachesPerSkillVersion: the daemon's skill search embeds
// a skill once per version, across deployments and agents; with the
// embedder none it is BM25 and embeds nothing.
func TestSkillSearchCachesPerSkillVersion(t *testing.T) {
	repo := fstest.MapFS{
		"pdf/SKILL.md":    {Data: []byte("---\nname: pdf\ndescription: Convert documents to PDF.\n---\n")},
		"chart/SKILL.md":  {Data: []byte("---\nname: chart\ndescription: Draw charts from tables.\n---\n")},
		"deploy/SKILL.md": {Data: []byte("---\nname: deploy\ndescription: Roll out to production.\n---\n")},
	}
	load := func(v uint64) *skills.Set {
		return skills.Load(v, []skills.Source{{Tier: skills.TierManaged, FS: repo, Prefix: "m"}})
	}
	emb := &countingEmbedder{}
	ss := newSkillSearch(emb)
	search := func(set *skills.Set, agent string) {
		t.Helper()
		if _, err := ss.search(context.Background(), set, "deployment", skills.Request{Agent: agent}, 0); err != nil {
			t.Fatal(err)
		}
	}
	search(load(1), "a")
	search(load(2), "b") // a redeploy, another agent: the same versions
	if got := emb.texts.Load(); got != 3+2 {
		t.Errorf("embedded %d texts, want 5 (3 skills once, 2 queries)", got)
	}
	repo["pdf/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: pdf\ndescription: Turn documents into PDF files.\n---\n")}
	search(load(3), "a")
	if got := emb.texts.Load(); got != 5+2 {
		t.Errorf("after a changed skill: embedded %d texts, want 7 (that skill, the query)", got)
	}
	if none := newSkillSearch(memory.None{}); none.emb != nil {
		t.Errorf("the embedder none makes search hybrid")
	}
}
