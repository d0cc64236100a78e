package skills

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/internal/testenv"
	"github.com/quirehq/quire/workspace"
)

func skillMD(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func slugs(list []*Skill) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Slug)
	}
	return out
}

func TestTiersOverrideAndShadow(t *testing.T) {
	home := t.TempDir()
	managed := t.TempDir()
	ws := fstest.MapFS{
		"agent.yaml":                      {Data: []byte("name: a\n")},
		"skills/pdf/SKILL.md":             {Data: []byte(skillMD("pdf", "Workspace PDF.", "Run {baseDir}/convert.sh\n"))},
		".agents/skills/pdf/SKILL.md":     {Data: []byte(skillMD("pdf", "Agents-dir PDF.", ""))},
		".agents/skills/notes/SKILL.md":   {Data: []byte(skillMD("notes", "Agents-dir notes.", ""))},
		"skills/broken/SKILL.md":          {Data: []byte("no front matter\n")},
		"skills/empty-dir/README.md":      {Data: []byte("not a skill")},
		"skills/durable-memory/SKILL.md":  {Data: []byte(skillMD("durable-memory", "Our own memory rules.", ""))},
		"skills/.hidden/SKILL.md":         {Data: []byte(skillMD(".hidden", "x", ""))},
		"skills/loose-file.md":            {Data: []byte("ignored")},
		".agents/skills/broken/SKILL.md":  {Data: []byte(skillMD("broken", "The agents-dir copy still loads.", ""))},
		"skills/warn/SKILL.md":            {Data: []byte("---\nname: warn\ndescription: d\ncolour: red\n---\n")},
		"memory/2026-01-01.md":            {Data: []byte("not a skill")},
		"users/alice/skills/x/SKILL.md":   {Data: []byte(skillMD("x", "per-user dirs are not a tier", ""))},
		".agents/skills/notes/extra.txt":  {Data: []byte("bundled")},
		"skills/pdf/convert.sh":           {Data: []byte("#!/bin/sh")},
		"skills/pdf/nested/deep/file.txt": {Data: []byte("x")},
	}
	writeFile(t, filepath.Join(home, ".agents/skills/notes/SKILL.md"), skillMD("notes", "Home notes.", ""))
	writeFile(t, filepath.Join(home, ".agents/skills/home-only/SKILL.md"), skillMD("home-only", "Home only.", ""))
	writeFile(t, filepath.Join(managed, "home-only/SKILL.md"), skillMD("home-only", "Managed copy.", ""))
	writeFile(t, filepath.Join(managed, "daily-log-hygiene/SKILL.md"), skillMD("daily-log-hygiene", "Managed log rules.", ""))

	opts := Options{Workspace: ws, WorkspaceDir: "/srv/agent", HomeDir: home, ManagedDir: managed}
	set := Load(7, opts.Sources())

	if set.Version() != 7 {
		t.Errorf("version = %d", set.Version())
	}
	want := []string{"broken", "daily-log-hygiene", "durable-memory", "home-only", "notes", "pdf", "skill-authoring", "warn"}
	if got := slugs(set.Skills()); !slices.Equal(got, want) {
		t.Fatalf("skills = %v, want %v", got, want)
	}
	tierOf := map[string]Tier{"broken": TierWorkspaceAgents, "daily-log-hygiene": TierManaged, "durable-memory": TierWorkspace,
		"home-only": TierHome, "notes": TierWorkspaceAgents, "pdf": TierWorkspace, "skill-authoring": TierBuiltin, "warn": TierWorkspace}
	for _, s := range set.Skills() {
		if s.Tier != tierOf[s.Slug] {
			t.Errorf("%s: tier %s, want %s", s.Slug, s.Tier, tierOf[s.Slug])
		}
	}
	pdf, _ := set.Skill("pdf")
	if pdf.Description != "Workspace PDF." || pdf.Dir != "/srv/agent/skills/pdf" || pdf.Location != "skills/pdf/SKILL.md" || pdf.Path != "skills/pdf/SKILL.md" {
		t.Errorf("pdf = %+v", pdf)
	}
	if got := pdf.ResolvedBody(); got != "Run /srv/agent/skills/pdf/convert.sh\n" {
		t.Errorf("resolved body = %q", got)
	}
	builtin, _ := set.Skill("skill-authoring")
	if builtin.Location != "builtin/skill-authoring/SKILL.md" {
		t.Errorf("built-in location = %q", builtin.Location)
	}

	var shadows []string
	for _, sh := range set.Shadows() {
		shadows = append(shadows, sh.String())
	}
	wantShadowSet := map[string]bool{
		"builtin/daily-log-hygiene/SKILL.md (builtin) is shadowed by " + filepath.Join(managed, "daily-log-hygiene/SKILL.md") + " (managed)":               true,
		"builtin/durable-memory/SKILL.md (builtin) is shadowed by skills/durable-memory/SKILL.md (workspace)":                                              true,
		filepath.Join(managed, "home-only/SKILL.md") + " (managed) is shadowed by " + filepath.Join(home, ".agents/skills/home-only/SKILL.md") + " (home)": true,
		filepath.Join(home, ".agents/skills/notes/SKILL.md") + " (home) is shadowed by .agents/skills/notes/SKILL.md (workspace-agents)":                   true,
		".agents/skills/pdf/SKILL.md (workspace-agents) is shadowed by skills/pdf/SKILL.md (workspace)":                                                    true,
	}
	if len(shadows) != len(wantShadowSet) {
		t.Errorf("shadows = %q", shadows)
	}
	for _, s := range shadows {
		if !wantShadowSet[s] {
			t.Errorf("unexpected shadow %q", s)
		}
	}

	probs := Check(opts.Sources())
	var texts []string
	for _, p := range probs {
		texts = append(texts, p.String())
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{
		"skills/broken/SKILL.md:1: error: SKILL.md has no front matter",
		`skills/warn/SKILL.md:4: warning: unknown key "colour"`,
		`skills/pdf/SKILL.md: warning: skill "pdf" is shadowed by`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("Check lacks %q; got:\n%s", want, joined)
		}
	}
	// The built-in skills are themselves clean.
	for _, p := range probs {
		if strings.HasPrefix(p.Path, "builtin/") && p.Severity == workspace.SeverityError {
			t.Errorf("built-in skill problem: %v", p)
		}
	}
}

func TestBuiltinSkillsAreClean(t *testing.T) {
	set := Load(1, Options{}.Sources())
	if len(set.Problems()) != 0 || len(set.Skills()) < 2 {
		t.Fatalf("built-ins: %d skills, problems %v", len(set.Skills()), set.Problems())
	}
}

func TestSearchMatchesBM25Formula(t *testing.T) {
	ws := fstest.MapFS{
		"skills/pdf/SKILL.md":     {Data: []byte(skillMD("pdf", "Convert PDF to markdown.", ""))},
		"skills/log/SKILL.md":     {Data: []byte(skillMD("log", "Write daily log entries.", ""))},
		"skills/convert/SKILL.md": {Data: []byte(skillMD("convert", "Convert files between formats.", ""))},
	}
	set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	// Documents (slug order): convert = [convert convert files between formats] (5),
	// log = [log write daily log entries] (5), pdf = [pdf convert pdf to markdown] (5). avgdl = 5.
	// idf(convert) = ln((3-2+0.5)/(2+0.5)+1) = ln 1.6 ; idf(pdf) = ln((3-1+0.5)/(1+0.5)+1) = ln(8/3).
	// norm = k1 · (1 - b + b · 5/5) = 1.2.
	idfConvert, idfPDF := math.Log(1.6), math.Log(8.0/3)
	w := func(tf float64) float64 { return tf * 2.2 / (tf + 1.2) }
	hits := set.Search("convert a PDF", Request{}, 0, nil)
	want := []struct {
		slug  string
		score float64
	}{
		{"pdf", idfConvert*w(1) + idfPDF*w(2)},
		{"convert", idfConvert * w(2)},
	}
	if len(hits) != len(want) {
		t.Fatalf("hits = %v", hits)
	}
	for i, h := range hits {
		if h.Skill.Slug != want[i].slug || math.Abs(h.Score-want[i].score) > 1e-6 {
			t.Errorf("hit %d = %s %.9f, want %s %.9f", i, h.Skill.Slug, h.Score, want[i].slug, want[i].score)
		}
	}
	if hits := set.Search("x", Request{}, 0, nil); len(hits) != 0 {
		t.Errorf("one-character query found %v", hits)
	}
	if a, b := set.Search("pdf pdf convert", Request{}, 0, nil), set.Search("pdf convert", Request{}, 0, nil); !slices.Equal(a, b) {
		t.Errorf("duplicate query words changed the result: %v vs %v", a, b)
	}
}

func TestSearchTiesBySlugAndDefaultLimit(t *testing.T) {
	ws := fstest.MapFS{}
	for _, s := range []string{"golf", "alpha", "echo", "charlie", "bravo", "delta", "foxtrot"} {
		ws["skills/"+s+"/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD(s, "Shared words here.", ""))}
	}
	set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	hits := set.Search("shared", Request{}, 0, nil)
	var got []string
	for _, h := range hits {
		got = append(got, h.Skill.Slug)
	}
	if want := []string{"alpha", "bravo", "charlie", "delta", "echo"}; !slices.Equal(got, want) {
		t.Errorf("tied hits = %v, want %v", got, want)
	}
}

// wordEmbedder is a deterministic bag-of-words embedder over a fixed
// vocabulary: the real arithmetic, no model.
type wordEmbedder struct{ vocab []string }

func (wordEmbedder) Model() string { return "words" }

func (e wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, len(e.vocab))
		for _, tok := range strings.Fields(strings.ToLower(text)) {
			for j, w := range e.vocab {
				if strings.HasPrefix(tok, w) {
					v[j]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestHybridSearch(t *testing.T) {
	ws := fstest.MapFS{
		"skills/pdf/SKILL.md":   {Data: []byte(skillMD("pdf", "Convert documents to markdown.", ""))},
		"skills/notes/SKILL.md": {Data: []byte(skillMD("notes", "Keep meeting notes.", ""))},
		"skills/chart/SKILL.md": {Data: []byte(skillMD("chart", "Draw charts from tables.", ""))},
	}
	set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	emb := wordEmbedder{vocab: []string{"document", "markdown", "meeting", "notes", "chart", "table", "paper"}}

	// Both sides: 0.3 × bm25/max + 0.7 × cosine.
	hits, err := set.HybridSearch(context.Background(), emb, nil, "markdown paper", Request{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := emb.Embed(context.Background(), []string{"markdown paper", "pdf: Convert documents to markdown."})
	wantTop := 0.3*1 + 0.7*cosine(q[0], q[1])
	if len(hits) != 1 || hits[0].Skill.Slug != "pdf" || math.Abs(hits[0].Score-wantTop) > 1e-9 {
		t.Fatalf("hybrid hits = %+v, want pdf %.6f", hits, wantTop)
	}

	// No BM25 match: the cosine gets weight 1.
	hits, err = set.HybridSearch(context.Background(), emb, nil, "table", Request{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	q, _ = emb.Embed(context.Background(), []string{"table", "chart: Draw charts from tables."})
	if len(hits) != 1 || hits[0].Skill.Slug != "chart" || math.Abs(hits[0].Score-cosine(q[0], q[1])) > 1e-9 {
		t.Fatalf("vector-only hits = %+v", hits)
	}
	if hits[0].Score <= 0.7*cosine(q[0], q[1]) {
		t.Errorf("vector side was not given weight 1")
	}

	// No embedder: normalised BM25 with weight 1.
	hits, err = set.HybridSearch(context.Background(), nil, nil, "meeting notes", Request{}, 0)
	if err != nil || len(hits) != 1 || hits[0].Skill.Slug != "notes" || math.Abs(hits[0].Score-1) > 1e-9 {
		t.Fatalf("text-only hits = %+v, %v", hits, err)
	}
}

func TestAccessRules(t *testing.T) {
	grant := Grant{Agents: []string{"bot"}, Repositories: []string{"ops"}}
	tests := []struct {
		name   string
		access Access
		req    Request
		want   bool
	}{
		{"zero is public", Access{}, Request{}, true},
		{"public", Access{Visibility: Public}, Request{Agent: "x"}, true},
		{"internal, an agent", Access{Visibility: Internal}, Request{Agent: "x"}, true},
		{"internal, no agent", Access{Visibility: Internal}, Request{}, false},
		{"private granted agent", Access{Visibility: Private, Grant: grant}, Request{Agent: "bot"}, true},
		{"private granted repository", Access{Visibility: Private, Grant: grant}, Request{Agent: "any", Repo: "ops"}, true},
		{"private other agent", Access{Visibility: Private, Grant: grant}, Request{Agent: "other", Repo: "web", User: "bot"}, false},
		{"private no grant", Access{Visibility: Private}, Request{Agent: "bot"}, false},
		{"private, no agent", Access{Visibility: Private, Grant: grant}, Request{Repo: "ops"}, false},
		{"unknown visibility denies", Access{Visibility: "pubic"}, Request{Agent: "bot"}, false},
	}
	for _, tt := range tests {
		if got := tt.access.Allows(&tt.req); got != tt.want {
			t.Errorf("%s: Allows(%+v) = %v, want %v", tt.name, tt.req, got, tt.want)
		}
	}
}

// sharedFS is a shared skills repository: skills with front matter and
// a grants file.
func sharedFS(grants string, skills map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	if grants != "" {
		fsys["grants.yaml"] = &fstest.MapFile{Data: []byte(grants)}
	}
	for slug, text := range skills {
		fsys[slug+"/SKILL.md"] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys
}

func TestPrivateSkillInvisibleToOtherAgents(t *testing.T) {
	repo := sharedFS("alice-secrets:\n  agents: [alice]\n", map[string]string{
		"alice-secrets": "---\nname: alice-secrets\ndescription: Alice's private expense workflow.\nvisibility: private\n---\n",
		"team-expenses": skillMD("team-expenses", "Shared expense workflow.", ""),
	})
	src, _, probs := SharedSource(repo, "skills")
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	set := Load(1, []Source{src})

	alice, bob := Request{Agent: "alice"}, Request{Agent: "bob", User: "alice"}
	if got := slugs(set.List(alice)); !slices.Equal(got, []string{"alice-secrets", "team-expenses"}) {
		t.Errorf("alice lists %v", got)
	}
	if got := slugs(set.List(bob)); !slices.Equal(got, []string{"team-expenses"}) {
		t.Errorf("bob lists %v", got)
	}
	for _, h := range set.Search("expense workflow private alice", bob, 10, nil) {
		if h.Skill.Slug == "alice-secrets" {
			t.Errorf("bob's search found alice's private skill")
		}
	}
	if hits := set.Search("alice private", alice, 10, nil); len(hits) == 0 || hits[0].Skill.Slug != "alice-secrets" {
		t.Errorf("alice's search = %v", hits)
	}
	hh, err := set.HybridSearch(context.Background(), wordEmbedder{vocab: []string{"expense", "private"}}, nil, "private expense", bob, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hh {
		if h.Skill.Slug == "alice-secrets" {
			t.Errorf("bob's hybrid search found alice's private skill")
		}
	}
	for _, e := range set.PromptSkills(bob) {
		if e.Name == "alice-secrets" {
			t.Errorf("alice's private skill reached bob's prompt")
		}
	}
	if _, ok := set.Show(bob, "alice-secrets"); ok {
		t.Errorf("bob can show alice's private skill")
	}
	if len(set.PromptSkills(alice)) != 2 {
		t.Errorf("alice's prompt lacks her skill: %v", set.PromptSkills(alice))
	}
}

func TestAllowListAndFilter(t *testing.T) {
	ws := fstest.MapFS{}
	for _, s := range []string{"a1", "b2", "c3"} {
		ws["skills/"+s+"/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD(s, "Common text "+s+".", ""))}
	}
	set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	tests := []struct {
		name string
		req  Request
		want []string
	}{
		{"nil allow list = all", Request{}, []string{"a1", "b2", "c3"}},
		{"empty allow list = none", Request{Allow: []string{}}, nil},
		{"allow list", Request{Allow: []string{"c3", "a1", "missing"}}, []string{"a1", "c3"}},
		{"filter overrides allow list", Request{Allow: []string{"a1"}, Filter: []string{"b2"}}, []string{"b2"}},
		{"empty filter = none", Request{Filter: []string{}}, nil},
	}
	for _, tt := range tests {
		var prompted []string
		for _, e := range set.PromptSkills(tt.req) {
			prompted = append(prompted, e.Name)
		}
		var searched []string
		for _, h := range set.Search("common text", tt.req, 10, nil) {
			searched = append(searched, h.Skill.Slug)
		}
		if !slices.Equal(prompted, tt.want) || !slices.Equal(searched, tt.want) || !slices.Equal(slugs(set.List(tt.req)), tt.want) {
			t.Errorf("%s: prompt %v, search %v, list %v; want %v", tt.name, prompted, searched, slugs(set.List(tt.req)), tt.want)
		}
	}
}

// manySkills returns a workspace with n skills of 12–30 words each.
func manySkills(n int) fstest.MapFS {
	vocab := strings.Fields(`convert markdown pdf files write daily log memory entries skill search index git commit
branch review deploy agent prompt budget truncate token user room chat daemon editor language server vector
embed chunk hybrid rank score query test build release docker image python shell script format lint check yaml
json csv table chart plot email calendar meeting notes summary`)
	ws := fstest.MapFS{}
	seed := uint32(7)
	next := func() int { seed = seed*1664525 + 1013904223; return int(seed >> 8) }
	for i := 0; i < n; i++ {
		slug := fmt.Sprintf("skill-%04d", i)
		var words []string
		for w := 12 + next()%19; w > 0; w-- {
			words = append(words, vocab[next()%len(vocab)])
		}
		ws["skills/"+slug+"/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD(slug, strings.Join(words, " ")+".", "Body.\n"))}
	}
	return ws
}

func TestSearchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	set := Load(1, Options{Workspace: manySkills(1000), NoBuiltin: true}.Sources())
	req := Request{Agent: "bot", User: "u", Allow: []string{"skill-0001", "skill-0500", "skill-0999"}}
	dst := make([]Hit, 0, DefaultLimit)
	set.Search("convert markdown", Request{}, 0, dst)
	allocs := testing.AllocsPerRun(50, func() {
		dst = set.Search("convert markdown files to pdf", Request{}, 0, dst)
		dst = set.Search("convert markdown files to pdf", req, 0, dst)
	})
	if allocs != 0 {
		t.Errorf("Search allocated %.1f times per query", allocs)
	}
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{100, 1000} {
		ws := manySkills(n)
		repo := fstest.MapFS{}
		for name, f := range ws {
			repo[strings.TrimPrefix(name, "skills/")] = f
		}
		var allow []string
		for i := 0; i < n; i += 10 {
			slug := fmt.Sprintf("skill-%04d", i)
			repo[slug+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + slug + "\ndescription: Private convert markdown pdf.\nvisibility: private\n---\n")}
		}
		for i := 0; i < 20; i++ {
			allow = append(allow, fmt.Sprintf("skill-%04d", i*n/20))
		}
		plain := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
		managed := Load(1, []Source{{Tier: TierManaged, FS: repo, Prefix: "managed", Shared: true}})
		cases := []struct {
			name string
			set  *Set
			req  Request
		}{
			{"all", plain, Request{Agent: "bot", User: "alice"}},
			{"allow=20", plain, Request{Agent: "bot", User: "alice", Allow: allow}},
			{"private=10%", managed, Request{Agent: "bot", User: "bob"}},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("skills=%d/%s", n, c.name), func(b *testing.B) {
				dst := make([]Hit, 0, DefaultLimit)
				b.ReportAllocs()
				for b.Loop() {
					dst = c.set.Search("convert markdown files to pdf", c.req, 0, dst)
				}
			})
		}
	}
}

func mustSub(tb testing.TB, fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		tb.Fatal(err)
	}
	return sub
}

func BenchmarkIndexBuild(b *testing.B) {
	set := Load(1, Options{Workspace: manySkills(1000), NoBuiltin: true}.Sources())
	list := set.Skills()
	b.ReportAllocs()
	for b.Loop() {
		newSet(1, list, nil, nil).bm25()
	}
}

// BenchmarkLoadDisk reads 1,000 skill directories from disk, as the CLI
// and the language server do; ns/skill is the per-skill cost.
func BenchmarkLoadDisk(b *testing.B) {
	dir := b.TempDir()
	for p, f := range manySkills(1000) {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	src := Options{WorkspaceDir: dir, NoBuiltin: true}.Sources()
	b.ReportAllocs()
	start := testenv.CPUTime()
	for b.Loop() {
		if n := len(Load(1, src).Skills()); n != 1000 {
			b.Fatalf("loaded %d skills", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/skill")
	b.ReportMetric(float64((testenv.CPUTime()-start).Nanoseconds())/float64(b.N)/1000, "cpu-ns/skill")
}

func BenchmarkLoad(b *testing.B) {
	ws := manySkills(1000)
	b.ReportAllocs()
	for b.Loop() {
		Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	}
}

func TestCheckAgent(t *testing.T) {
	fsys := fstest.MapFS{
		"agents/bot/agent.yaml":                     {Data: []byte("name: bot\n")},
		"agents/bot/skills/pdf/SKILL.md":            {Data: []byte("---\nname: pdf\ndescription: d\nextra: 1\n---\n")},
		"agents/bot/.agents/skills/pdf/SKILL.md":    {Data: []byte(skillMD("pdf", "older copy", ""))},
		"agents/bot/skills/bad/SKILL.md":            {Data: []byte("---\nname: good\ndescription: d\n---\n")},
		"agents/bot/skills/durable-memory/SKILL.md": {Data: []byte(skillMD("durable-memory", "ours", ""))},
		"agents/other/skills/elsewhere/SKILL.md":    {Data: []byte("broken")},
	}
	var got []string
	for _, p := range CheckAgent(fsys, "agents/bot") {
		got = append(got, p.Code+" "+p.String())
	}
	want := []string{
		`skill-shadowed agents/bot/.agents/skills/pdf/SKILL.md: warning: skill "pdf" here is shadowed by agents/bot/skills/pdf/SKILL.md, which wins; delete one of them`,
		`skill-name-mismatch agents/bot/skills/bad/SKILL.md:2: warning: name "good" differs from its directory "bad"; the skill loads as "bad" (the directory wins): rename one so they match`,
		`skill-shadowed agents/bot/skills/durable-memory/SKILL.md: info: skill "durable-memory" overrides Quire's built-in skill of the same name`,
		`skill-unknown-key agents/bot/skills/pdf/SKILL.md:4: warning: unknown key "extra" is ignored (Quire reads name, description, license, compatibility, metadata, allowed-tools, visibility; silence this warning with skill_unknown_keys: ignore in agent.yaml)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("CheckAgent =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type countingEmbedder struct {
	wordEmbedder
	calls *int
}

func (e countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	*e.calls += len(texts)
	return e.wordEmbedder.Embed(ctx, texts)
}

func TestHybridSearchCachesVectorsPerSkillVersion(t *testing.T) {
	ws := manySkills(50)
	calls := 0
	emb := &countingEmbedder{wordEmbedder: wordEmbedder{vocab: []string{"pdf", "chart", "memory"}}, calls: &calls}
	var cache Vectors
	search := func(set *Set) {
		t.Helper()
		if _, err := set.HybridSearch(context.Background(), emb, &cache, "pdf chart", Request{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	set := Load(1, Options{Workspace: ws, NoBuiltin: true}.Sources())
	for range 3 {
		search(set)
	}
	if calls != 50+3 || cache.Embedded() != 50 {
		t.Errorf("embedded %d texts (%d skills) for 3 queries over 50 skills, want 53 (skills once, then one per query)", calls, cache.Embedded())
	}
	// A reload with one skill changed embeds that skill only: the others'
	// versions are unchanged.
	ws["skills/skill-0007/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD("skill-0007", "Plot a chart.", ""))}
	calls = 0
	search(Load(2, Options{Workspace: ws, NoBuiltin: true}.Sources()))
	if calls != 1+1 || cache.Embedded() != 51 {
		t.Errorf("after changing one skill: embedded %d texts, cache %d, want 2 (the changed skill, the query) and 51", calls, cache.Embedded())
	}
	// Without a cache, every search embeds every skill.
	calls = 0
	if _, err := set.HybridSearch(context.Background(), emb, nil, "pdf", Request{}, 0); err != nil || calls != 51 {
		t.Errorf("uncached search embedded %d texts (%v), want 51", calls, err)
	}
}

func TestOversizedSkillIsNotRead(t *testing.T) {
	big := skillMD("big", "Large.", strings.Repeat("x", MaxSkillBytes))
	set := Load(1, Options{Workspace: fstest.MapFS{"skills/big/SKILL.md": {Data: []byte(big)}}, NoBuiltin: true}.Sources())
	if len(set.Skills()) != 0 || len(set.Problems()) != 1 || set.Problems()[0].Code != "skill-too-large" {
		t.Errorf("skills %v, problems %v", slugs(set.Skills()), set.Problems())
	}
}
