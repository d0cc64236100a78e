package prompt

import (
	"crypto/sha256"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/quirehq/quire/workspace"
)

// mapStore is a TokenStore in memory that counts what it is asked.
type mapStore struct {
	mu     sync.Mutex
	counts map[[sha256.Size]byte]int
	hits   int
}

func (m *mapStore) TokenCount(sum [sha256.Size]byte) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.counts[sum]
	if ok {
		m.hits++
	}
	return n, ok
}

func (m *mapStore) RememberTokenCount(sum [sha256.Size]byte, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[sum] = n
}

// Token counts kept in a store are found again by a new Cache (a new
// process) for the same text only, without loading the tokenizer.
func TestTokenStore(t *testing.T) {
	store := &mapStore{counts: map[[sha256.Size]byte]int{}}
	first := NewTokenizer()
	first.SetStore(store)
	n := first.Count("Hello, world! Tokenise me.")
	if n == 0 || len(store.counts) != 1 {
		t.Fatalf("count %d, store %v", n, store.counts)
	}
	second := NewTokenizer()
	second.SetStore(store)
	if got := second.Count("Hello, world! Tokenise me."); got != n || store.hits != 1 {
		t.Errorf("second process: count %d (want %d), store hits %d", got, n, store.hits)
	}
	if second.codec != nil {
		t.Errorf("the tokenizer was loaded for a count the store had")
	}
	// Another text, or another tokenizer, is another key.
	if ContentSum(DefaultEncoding, "a") == ContentSum(DefaultEncoding, "b") || ContentSum("cl100k_base", "a") == ContentSum(DefaultEncoding, "a") {
		t.Errorf("content sums collide")
	}
	second.Count("Another text.")
	if len(store.counts) != 2 {
		t.Errorf("store holds %d counts, want 2", len(store.counts))
	}
}

// A workspace opened with EstimateTokens never tokenises: its report says
// the counts are estimates.
func TestEstimateTokens(t *testing.T) {
	cache := NewTokenizer()
	w, err := Open(mapFS(map[string]string{"a/agent.yaml": "", "a/SOUL.md": "Twelve chars"}), Options{Tokenizer: cache, EstimateTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	res := assemble(t, w, Request{})
	f, ok := res.Report.File(workspace.SoulFile)
	if !ok || !f.OriginalTokensEstimated || f.OriginalTokens != 3 || f.InjectedTokens != 3 {
		t.Errorf("SOUL.md report %+v", f)
	}
	if cache.codec != nil {
		t.Errorf("the tokenizer was loaded")
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, content := range files {
		m[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return m
}

// TestRenderKeyTellsRequestsApart: requests that render differently get
// different render keys, also when only a boundary between two strings
// moves or a flag changes.
func TestRenderKeyTellsRequestsApart(t *testing.T) {
	w, err := Open(fstest.MapFS{"AGENTS.md": {Data: []byte("a\n")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := Request{Tools: []Tool{{Name: "ab", Description: "c"}}, Skills: []Skill{{Name: "s", Description: "d", Location: "l"}}, Model: "m"}
	variants := map[string]func(r *Request){
		"base":          func(r *Request) {},
		"tool boundary": func(r *Request) { r.Tools = []Tool{{Name: "a", Description: "bc"}} },
		"tool into skill": func(r *Request) {
			r.Tools = nil
			r.Skills = append([]Skill{{Name: "ab", Description: "c"}}, r.Skills...)
		},
		"skill builtin":      func(r *Request) { r.Skills = []Skill{{Name: "s", Description: "d", Location: "l", Builtin: true}} },
		"model into sandbox": func(r *Request) { r.Model, r.Sandbox = "", "m" },
		"extra":              func(r *Request) { r.Extra = "x" },
		"virtual file":       func(r *Request) { r.VirtualFiles = []VirtualFile{{Name: "V.md", Content: "v"}} },
		"show time":          func(r *Request) { r.ShowTime = true },
		"can spawn":          func(r *Request) { r.CanSpawn = true },
	}
	seen := map[uint64]string{}
	for name, change := range variants {
		r := base
		r.Tools = slices.Clone(base.Tools)
		r.Skills = slices.Clone(base.Skills)
		change(&r)
		k := w.renderKey(&r, noon)
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s have the same render key", name, other)
		}
		seen[k] = name
	}
}

// TestFileKeyIsCountKey: a file's fingerprint is the key Cache.Count
// remembers its text by, so counting a text through either finds the
// other's count.
func TestFileKeyIsCountKey(t *testing.T) {
	soul := strings.Repeat("Calm and kind. ", 300)
	w, err := Open(fstest.MapFS{"SOUL.md": {Data: []byte(soul)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.Agent("")
	f, err := w.file(a, "SOUL.md", "SOUL.md", "")
	if err != nil || f == nil {
		t.Fatalf("SOUL.md: %v, %v", f, err)
	}
	if f.key != contentKey(w.cache.seed, soul) {
		t.Errorf("the file's key is not contentKey of its text")
	}
	n := w.cache.Count(soul)
	if got, ok := w.cache.cachedCount(f.key); !ok || got != n {
		t.Errorf("Count(SOUL.md) = %d is not remembered under the file's key (%d, %v)", n, got, ok)
	}
}
