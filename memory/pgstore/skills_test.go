package pgstore

import (
	"context"
	"testing"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/storetest"
)

func TestManagedSkills(t *testing.T) {
	ctx := context.Background()
	e := &storetest.Flaky{Embedder: memory.Builtin{}}
	s := openStore(t, testSchema(t), e)
	put := func(sk ManagedSkill) int {
		t.Helper()
		v, err := s.PutSkill(ctx, sk)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := put(ManagedSkill{Slug: "pdf", Content: "v1 body", Description: "Convert PDF files"}); v != 1 {
		t.Errorf("first version = %d", v)
	}
	if v := put(ManagedSkill{Slug: "pdf", Content: "v1 body", Description: "Convert PDF files", Visibility: "internal", Owner: "olga"}); v != 1 {
		t.Errorf("same content made version %d; want 1", v)
	}
	e.Down.Store(true) // the new version waits for back-fill
	if v := put(ManagedSkill{Slug: "pdf", Content: "v2 body", Description: "Convert PDF and EPUB files", Visibility: "internal", Owner: "olga"}); v != 2 {
		t.Errorf("changed content made version %d; want 2", v)
	}
	put(ManagedSkill{Slug: "charts", Content: "charts", Description: "Draw charts"})
	if err := s.GrantSkillToAgent(ctx, "pdf", "pinned", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantSkillToAgent(ctx, "pdf", "latest", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantSkillToUser(ctx, "pdf", "ursula"); err != nil {
		t.Fatal(err)
	}
	if err := s.GrantSkillToAgent(ctx, "pdf", "x", 7); err == nil {
		t.Error("pinning a version that does not exist succeeded")
	}

	byAgent := func(agent string) map[string]ManagedSkill {
		list, err := s.ManagedSkills(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]ManagedSkill{}
		for _, sk := range list {
			m[sk.Slug] = sk
		}
		return m
	}
	pinned, latest := byAgent("pinned")["pdf"], byAgent("latest")["pdf"]
	if pinned.Version != 1 || pinned.Content != "v1 body" || latest.Version != 2 || latest.Content != "v2 body" {
		t.Errorf("pinned = v%d %q, latest = v%d %q", pinned.Version, pinned.Content, latest.Version, latest.Content)
	}
	if latest.Visibility != "internal" || latest.Owner != "olga" || len(latest.UserGrants) != 1 || latest.UserGrants[0] != "ursula" {
		t.Errorf("access = %+v", latest)
	}
	if len(latest.AgentGrants) != 2 || latest.AgentGrants[0] != (SkillAgentGrant{"latest", 0}) || latest.AgentGrants[1] != (SkillAgentGrant{"pinned", 1}) {
		t.Errorf("agent grants = %+v", latest.AgentGrants)
	}
	if pinned.Vector == nil || latest.Vector != nil {
		t.Errorf("vectors: v1 %v, v2 %v; want v1 embedded, v2 pending", pinned.Vector != nil, latest.Vector != nil)
	}
	e.Down.Store(false)
	if n, err := s.Backfill(ctx); err != nil || n != 2 {
		t.Errorf("backfill = %d, %v; want pdf v2 and charts", n, err)
	}
	if byAgent("latest")["pdf"].Vector == nil {
		t.Error("v2 still has no vector after back-fill")
	}
	if err := s.RevokeSkill(ctx, "pdf", "latest", "ursula"); err != nil {
		t.Fatal(err)
	}
	if sk := byAgent("x")["pdf"]; len(sk.UserGrants) != 0 || len(sk.AgentGrants) != 1 {
		t.Errorf("after revoke: %+v", sk)
	}
	if err := s.DeleteSkill(ctx, "pdf"); err != nil {
		t.Fatal(err)
	}
	if m := byAgent("x"); len(m) != 1 || m["charts"].Slug != "charts" {
		t.Errorf("after delete: %v", m)
	}
}

// A database migrated before the skills tables existed gets them, with an
// embedding column, although its embedder did not change.
func TestUpgradeAddsSkillTables(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{})
	if _, err := s.pool.Exec(ctx, "DROP TABLE skill_agent_grants, skill_user_grants, skill_versions, skills; DELETE FROM schema_migrations WHERE version = 2"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, schema, memory.Builtin{})
	if _, err := s.PutSkill(ctx, ManagedSkill{Slug: "a", Content: "x", Description: "y"}); err != nil {
		t.Fatal(err)
	}
	list, err := s.ManagedSkills(ctx, "")
	if err != nil || len(list) != 1 || list[0].Vector == nil {
		t.Errorf("after upgrade: %+v, %v", list, err)
	}
}
