package daemon_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/memory"
)

// agentFiles is a minimal workspace of agent name.
func agentFiles(name string) map[string]string {
	return map[string]string{
		"agent.yaml": "name: " + name + "\n",
		"SOUL.md":    "# Soul\n\nCalm.\n",
	}
}

const deploySkill = "---\nname: deploy-prod\ndescription: Roll out services to the production servers.\nvisibility: private\n---\nRun the release script.\n"

func skillNames(list []api.SkillEntry) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name)
	}
	return out
}

// TestSharedSkillsRepository pushes a shared skills repository with a
// private skill granted to alpha: alpha lists, finds, reads and is
// prompted with it through the API and MCP; beta never sees it, and
// reading it answers as for a skill that does not exist. A bad grants
// file is refused on push, and search is hybrid with the builtin
// embedder.
func TestSharedSkillsRepository(t *testing.T) {
	ctx := context.Background()
	td := startDaemon(t, daemon.Options{Embedder: memory.Builtin{}, APIListen: "127.0.0.1:0",
		Tokens: api.Tokens{"tok-alpha": {"alpha"}, "tok-beta": {"beta"}}})
	td.push(t, newWorkTree(t, agentFiles("alpha")), "alpha")
	td.push(t, newWorkTree(t, agentFiles("beta")), "beta")

	// A grants file naming a skill the repository lacks is refused.
	repo := newWorkTree(t, map[string]string{
		"deploy-prod/SKILL.md": deploySkill,
		"pdf/SKILL.md":         "---\nname: pdf\ndescription: Convert documents to PDF.\n---\nUse pandoc.\n",
		"grants.yaml":          "deploy-prod:\n  agents: [alpha]\ndeploy-prd:\n  agents: [beta]\n",
	})
	out, err := gitMay(repo, "push", td.remote+"/skills.git", "main")
	if err == nil || !strings.Contains(out, "remote: error:   grants.yaml: line 3:") || !strings.Contains(out, `"deploy-prd"`) {
		t.Fatalf("a push with a bad grants file: %v\n%s", err, out)
	}
	testenv.WriteFiles(t, repo, map[string]string{"grants.yaml": "deploy-prod:\n  agents: [alpha]\n"})
	git(t, repo, "commit", "-qam", "fix the grants")
	if out := td.push(t, repo, "skills"); !strings.Contains(out, "2 skills (1 public, 0 internal, 1 private)") {
		t.Errorf("push report: %s", out)
	}
	waitFor(t, "alpha to get the shared skills", func() bool {
		sk, err := td.c.Skills(ctx, "alpha", "")
		return err == nil && slices.Contains(skillNames(sk.Skills), "deploy-prod")
	})

	// The API: list, read, search.
	for _, tc := range []struct {
		agent string
		sees  bool
	}{{"alpha", true}, {"beta", false}} {
		sk, err := td.c.Skills(ctx, tc.agent, "")
		if err != nil || slices.Contains(skillNames(sk.Skills), "deploy-prod") != tc.sees || !slices.Contains(skillNames(sk.Skills), "pdf") {
			t.Errorf("%s lists %v (%v)", tc.agent, skillNames(sk.Skills), err)
		}
		found, err := td.c.SkillsSearch(ctx, tc.agent, api.SkillsSearchRequest{Query: "roll out to production"})
		if err != nil || slices.Contains(skillNames(found.Skills), "deploy-prod") != tc.sees {
			t.Errorf("%s searches %v (%v)", tc.agent, skillNames(found.Skills), err)
		}
		p, err := td.c.Prompt(ctx, tc.agent, api.PromptRequest{})
		if err != nil || strings.Contains(p.Prompt, "deploy-prod") != tc.sees {
			t.Errorf("%s's prompt lists deploy-prod: %v, want %v (%v)", tc.agent, !tc.sees, tc.sees, err)
		}
	}
	for agent, sees := range map[string]bool{"alpha": true, "beta": false} {
		if _, _, body := td.raw(t, http.MethodGet, "/v1/agents/"+agent+"/skills?all=true", nil, ""); strings.Contains(body, "deploy-prod") != sees {
			t.Errorf("%s's list of all skills: %s", agent, body)
		}
	}
	if body, err := td.c.Skill(ctx, "alpha", "deploy-prod", ""); err != nil || !strings.Contains(body.Body, "release script") {
		t.Errorf("alpha reads deploy-prod: %+v %v", body, err)
	}
	_, hidden := td.c.Skill(ctx, "beta", "deploy-prod", "")
	_, missing := td.c.Skill(ctx, "beta", "deploy-prxx", "")
	var he, me *api.Error
	if !errors.As(hidden, &he) || !errors.As(missing, &me) || he.Status != http.StatusNotFound ||
		strings.ReplaceAll(he.Message, "deploy-prod", "X") != strings.ReplaceAll(me.Message, "deploy-prxx", "X") {
		t.Errorf("beta reads deploy-prod: %v; a missing skill: %v (want the same 404)", hidden, missing)
	}

	// Hybrid: "deployment" is no word of the skill, so BM25 alone finds
	// nothing; the builtin embedder's trigrams match "deploy".
	found, err := td.c.SkillsSearch(ctx, "alpha", api.SkillsSearchRequest{Query: "deployment"})
	if err != nil || len(found.Skills) == 0 || found.Skills[0].Name != "deploy-prod" {
		t.Errorf("hybrid search for deployment: %v (%v)", skillNames(found.Skills), err)
	}

	// MCP: skill_search and skill_get.
	tcp := "http://" + td.d.APIAddr() + "/mcp"
	alpha, beta := newMCPSession(t, tcp, "tok-alpha"), newMCPSession(t, tcp, "tok-beta")
	if body := alpha.call(t, `{"name":"skill_get","arguments":{"name":"deploy-prod"}}`); !strings.Contains(body, "release script") {
		t.Errorf("alpha's skill_get: %s", body)
	}
	if body := alpha.call(t, `{"name":"skill_search","arguments":{"query":"production"}}`); !strings.Contains(body, "deploy-prod") {
		t.Errorf("alpha's skill_search: %s", body)
	}
	hiddenBody := beta.call(t, `{"name":"skill_get","arguments":{"name":"deploy-prod"}}`)
	missingBody := beta.call(t, `{"name":"skill_get","arguments":{"name":"deploy-prxx"}}`)
	if strings.Contains(hiddenBody, "release script") || strings.ReplaceAll(hiddenBody, "deploy-prod", "X") != strings.ReplaceAll(missingBody, "deploy-prxx", "X") {
		t.Errorf("beta's skill_get of deploy-prod: %s\nof a missing skill: %s", hiddenBody, missingBody)
	}
	if body := beta.call(t, `{"name":"skill_search","arguments":{"query":"production deployment"}}`); strings.Contains(body, "deploy-prod") {
		t.Errorf("beta's skill_search: %s", body)
	}
}
