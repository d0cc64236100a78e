package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quirehq/quire/daemon"
	"github.com/quirehq/quire/daemon/api"
)

// crewFiles is a repository of three agents: lead and mate are the team
// crew, outsider is in no team.
var crewFiles = map[string]string{
	"lead/agent.yaml":     "name: lead\nteam: crew\ntimezone: Europe/Lisbon\n",
	"lead/SOUL.md":        "# Soul\n\nLead.\n",
	"mate/agent.yaml":     "name: mate\nteam: crew\n",
	"mate/SOUL.md":        "# Soul\n\nMate.\n",
	"outsider/agent.yaml": "name: outsider\n",
	"outsider/SOUL.md":    "# Soul\n\nOutsider.\n",
}

// TestTeamAppend: memory_append with agents lands in each teammate's
// daily log; an agent outside the team is refused, and on a listener
// with tokens the token must allow every agent named.
func TestTeamAppend(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, daemon.Options{APIListen: "127.0.0.1:0", Tokens: api.Tokens{"tok-lead": {"lead"}, "tok-crew": {"lead", "mate"}}})
	td.deploy(t, "crew", "lead", crewFiles)

	cs := mustConnect(t, socketHTTP(td.socket), "http://quire/mcp?agent=lead&user=ana", nil)
	var res api.WriteResponse
	callOK(t, cs, "memory_append", map[string]any{"text": "The crew met Ana at the door.", "agents": []string{"mate"}}, &res)
	if res.Team == nil || len(res.Team.Written) != 2 || res.Team.Written[0].Agent != "lead" || res.Team.Written[1].Agent != "mate" ||
		!strings.HasPrefix(res.Team.Written[1].Path, "users/ana/memory/") {
		t.Fatalf("team append: %+v", res)
	}
	for _, w := range res.Team.Written {
		f, err := td.c.ReadFile(t.Context(), w.Agent, strings.TrimPrefix(w.Path, "users/ana/"), "ana")
		if err != nil || !strings.Contains(f.Content, "The crew met Ana at the door.") || f.ETag != w.ETag {
			t.Errorf("%s's %s: %+v, %v", w.Agent, w.Path, f, err)
		}
	}
	if e := callErr(t, cs, "memory_append", map[string]any{"text": "x", "agents": []string{"outsider"}}); e.Code != "bad_request" || !strings.Contains(e.Message, `"outsider" is not in team "crew"`) {
		t.Errorf("an agent outside the team: %+v", e)
	}

	base := "http://" + td.d.APIAddr() + "/mcp?agent=lead"
	lead := mustConnect(t, &http.Client{Transport: bearer{"tok-lead", http.DefaultTransport}}, base, nil)
	if e := callErr(t, lead, "memory_append", map[string]any{"text": "x", "agents": []string{"mate"}}); e.Code != "forbidden" || !strings.Contains(e.Message, `agent "mate"`) {
		t.Errorf("a token for lead only naming mate: %+v, want forbidden", e)
	}
	crew := mustConnect(t, &http.Client{Transport: bearer{"tok-crew", http.DefaultTransport}}, base, nil)
	callOK(t, crew, "memory_append", map[string]any{"text": "Both on shift.", "agents": []string{"mate"}}, &res)
	if res.Team == nil || len(res.Team.Written) != 2 {
		t.Fatalf("a token for the crew: %+v", res)
	}
}
