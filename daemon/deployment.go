package daemon

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/skills"
)

// deployment is one deployed revision of a source: the snapshot, the
// prompt workspace and every agent's skills, built before it is swapped
// in.
type deployment struct {
	commit string // commit hash, or worktree:<content id> for a working tree
	// fsys is what requests read: base with new users' seed files
	// served virtually (seedFS).
	fsys   fs.FS
	base   fs.FS
	ws     *prompt.Workspace
	agents map[string]*deployedAgent
	names  []string
	at     time.Time
	// logLevel is the level its deploy and index lines are logged at.
	logLevel slog.Level
	// damaged: its repository was damaged when it was built (it may
	// lack an agent); the same commit is built again once it is not.
	damaged bool
	// sharedSkills is the skills source of the shared skills
	// repository's deployment (which has no agents), nil for others.
	sharedSkills *skills.Source

	// prompts holds its answers to prompt requests (prompter).
	prompts promptCache
}

type deployedAgent struct {
	agent  *prompt.Agent
	skills *skills.Set
	// repo names the repository that defines the agent (a grant of a
	// shared skill may name it).
	repo string
}

// request is the skills request of the agent's own prompt (no user, its
// agent.yaml allow list): the prompt the deploy report describes.
func (a *deployedAgent) request() skills.Request {
	return a.userRequest("")
}

// userRequest is the skills request of the agent serving user.
func (a *deployedAgent) userRequest(user string) skills.Request {
	return skills.Request{Agent: a.agent.Name, Repo: a.repo, User: user, Allow: a.agent.Config.Skills}
}

// usable is the skills the agent may use in that prompt: those its allow
// list (and the access rules) let it see, not every skill it could load.
func (a *deployedAgent) usable() []*skills.Skill {
	return a.skills.List(a.request())
}

// sameSkills reports whether every agent of a and b has the same skills,
// problems and shadows: then b would serve exactly what a serves, and a
// (with its cached prompts) stays.
func sameSkills(a, b *deployment) bool {
	if len(a.agents) != len(b.agents) {
		return false
	}
	for name, aa := range a.agents {
		ba, ok := b.agents[name]
		if !ok {
			return false
		}
		x, y := aa.skills, ba.skills
		if len(x.Skills()) != len(y.Skills()) || !reflect.DeepEqual(x.Problems(), y.Problems()) || !reflect.DeepEqual(x.Shadows(), y.Shadows()) {
			return false
		}
		for i, sk := range x.Skills() {
			if !reflect.DeepEqual(*sk, *y.Skills()[i]) {
				return false
			}
		}
	}
	return true
}

func joinDir(root, rel string) string {
	if rel == "." || rel == "" {
		return root
	}
	return root + string(os.PathSeparator) + strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

func short(commit string) string {
	if len(commit) == 40 {
		return commit[:12]
	}
	return commit
}

// writeDeployReport writes one block of remote: lines per agent; now
// tells which daily logs the agent's retention will prune.
func writeDeployReport(w io.Writer, prev, dep *deployment, now time.Time) {
	for _, name := range dep.names {
		a := dep.agents[name]
		res, err := dep.ws.Assemble(prompt.Request{Agent: name, Session: prompt.SessionMain, Channel: prompt.ChannelDM,
			Skills: a.skills.PromptSkills(a.request()), CountPromptTokens: true})
		if err != nil {
			fmt.Fprintf(w, "%s: cannot assemble the prompt: %v\n", name, err)
			continue
		}
		r := res.Report
		pct := 0
		if r.Budget.Total() > 0 {
			pct = r.InjectedIn() * 100 / r.Budget.Total()
		}
		n := prompt.GroupThousands
		fmt.Fprintf(w, "%s: deployed %s: prompt %s chars / %s tokens; context files %s of %s %s (%d%% of the total budget)\n",
			name, short(dep.commit), n(r.PromptChars), n(r.PromptTokens), n(r.InjectedIn()), n(r.Budget.Total()), r.Budget.UnitName(), pct)
		for _, f := range r.Files {
			switch f.Status {
			case prompt.StatusTruncated, prompt.StatusClamped:
				fmt.Fprintf(w, "%s: %s %s: kept %s + %s of %s chars\n", name, f.Status, f.Name, n(f.HeadChars), n(f.TailChars), n(f.OriginalChars))
			case prompt.StatusDropped:
				fmt.Fprintf(w, "%s: dropped %s (%s chars): the total budget was used up\n", name, f.Name, n(f.OriginalChars))
			case prompt.StatusFull:
				for _, p := range prompt.FileProblems(f, &r.Budget, "") {
					if p.Code == prompt.CodeBudgetNear {
						fmt.Fprintf(w, "%s: warning: %s\n", name, p.Message)
					}
				}
			}
		}
		if cfg := a.agent.Config; cfg.DailyLogRetentionDays > 0 {
			loc := cfg.Location
			if loc == nil {
				loc = time.UTC
			}
			if old := memory.ExpiredLogs(dep.ws.FS(), a.agent.Dir, cfg.DailyLogRetentionDays, now.In(loc)); len(old) > 0 {
				fmt.Fprintf(w, "%s: daily logs: %s older than %d days (daily_log_retention_days) will be pruned within the hour: %s\n",
					name, n(len(old)), cfg.DailyLogRetentionDays, listSome(old, 5))
			}
		}
		for _, p := range a.skills.UnknownAllowed(a.agent) {
			fmt.Fprintf(w, "%s: %s\n", name, p)
		}
		var before []*skills.Skill
		if prev != nil {
			if pa, ok := prev.agents[name]; ok {
				before = pa.usable()
			}
		}
		added, changed, removed := skillChanges(before, a.usable())
		var parts []string
		for _, c := range []struct {
			what  string
			slugs []string
		}{{"added", added}, {"changed", changed}, {"removed", removed}} {
			if len(c.slugs) > 0 {
				parts = append(parts, c.what+" "+strings.Join(c.slugs, ", "))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s: skills %s\n", name, strings.Join(parts, "; "))
		}
	}
}

// skillChanges compares two lists of skills by slug.
func skillChanges(before, after []*skills.Skill) (added, changed, removed []string) {
	old := map[string]*skills.Skill{}
	for _, sk := range before {
		old[sk.Slug] = sk
	}
	for _, sk := range after {
		o, ok := old[sk.Slug]
		switch {
		case !ok:
			added = append(added, sk.Slug)
		case o.Description != sk.Description || o.Body != sk.Body || o.Path != sk.Path:
			changed = append(changed, sk.Slug)
		}
		delete(old, sk.Slug)
	}
	for slug := range old {
		removed = append(removed, slug)
	}
	sort.Strings(removed)
	return added, changed, removed
}

// listSome joins the first max items and says how many more there are.
func listSome(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}
