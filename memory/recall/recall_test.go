package recall

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/memory/openai"
	"github.com/quirehq/quire/memory/pgstore"
	"github.com/quirehq/quire/memory/storetest"
)

// devSet returns the LoCoMo dev set's directory, or skips: it is
// QUIRE_LOCOMO_DIR, else ../shared/bench/locomo-dev beside the module.
func devSet(tb testing.TB) []Conversation {
	tb.Helper()
	dir := os.Getenv("QUIRE_LOCOMO_DIR")
	if dir == "" {
		root, err := filepath.Abs("../..")
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(root, "..", "shared", "bench", "locomo-dev")
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		tb.Skipf("the LoCoMo dev set is not at %s (set QUIRE_LOCOMO_DIR): recall not measured", dir)
	}
	convs, err := Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return convs
}

// embedders are the embedders measured: none, builtin, glove when
// QUIRE_GLOVE_FILE names a GloVe text file, and an OpenAI-compatible
// endpoint when QUIRE_EMBED_URL and QUIRE_EMBED_MODEL name one (key in
// QUIRE_EMBED_KEY).
func embedders(tb testing.TB) []memory.Embedder {
	es := []memory.Embedder{memory.None{}, memory.Builtin{}}
	if f := os.Getenv("QUIRE_GLOVE_FILE"); f != "" {
		wv, err := memory.OpenWordVectors(f)
		if err != nil {
			tb.Fatal(err)
		}
		es = append(es, wv)
	}
	if url, model := os.Getenv("QUIRE_EMBED_URL"), os.Getenv("QUIRE_EMBED_MODEL"); url != "" && model != "" {
		e, err := openai.New(openai.Options{URL: url, Model: model, APIKey: os.Getenv("QUIRE_EMBED_KEY")})
		if err != nil {
			tb.Fatal(err)
		}
		if err := e.Probe(context.Background()); err != nil {
			tb.Fatalf("QUIRE_EMBED_URL %s: %v", url, err)
		}
		es = append(es, e)
	}
	return es
}

func name(e memory.Embedder) string {
	switch e.(type) {
	case memory.None:
		return "none"
	case memory.Builtin:
		return "builtin"
	case *openai.Embedder:
		return "openai"
	}
	return "glove"
}

// BenchmarkFusion prints recall@6 of the embedded store for each embedder
// with vectors under each fusion rule: text weights from 0 (vectors only)
// to 1 (text only) and RRF. It is how the fusion rule for an embedder is
// chosen by measurement (`go test -run '^$' -bench Fusion -benchtime 1x
// ./memory/recall`, with QUIRE_GLOVE_FILE or QUIRE_EMBED_URL and
// QUIRE_EMBED_MODEL for real vectors): the default must beat plain BM25
// (weight 1) overall and in no category fall below it.
func BenchmarkFusion(b *testing.B) {
	convs := devSet(b)
	for _, e := range embedders(b)[1:] {
		b.Run(name(e), func(b *testing.B) {
			s, err := memstore.New(memstore.Options{Embedder: e})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				for _, w := range []float64{0, 0.3, 0.5, 0.7, 0.8, 0.9, 1} {
					score, _, err := Run(context.Background(), s, convs, 6, memory.Query{TextWeight: &w})
					if err != nil {
						b.Fatal(err)
					}
					fmt.Printf("fusion %-7s weight %.1f %s\n", name(e), w, score)
				}
				score, _, err := Run(context.Background(), s, convs, 6, memory.Query{Fusion: memory.RRF})
				if err != nil {
					b.Fatal(err)
				}
				fmt.Printf("fusion %-7s rrf        %s\n", name(e), score)
			}
		})
	}
}

type opener struct {
	name string
	open func(tb testing.TB, e memory.Embedder) memory.Store
}

func stores(tb testing.TB) []opener {
	out := []opener{{"embedded", func(tb testing.TB, e memory.Embedder) memory.Store {
		s, err := memstore.New(memstore.Options{Embedder: e})
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}}}
	url := os.Getenv("QUIRE_TEST_DATABASE_URL")
	if url == "" {
		tb.Log("QUIRE_TEST_DATABASE_URL is not set: the PostgreSQL store is not measured")
		return out
	}
	return append(out, opener{"postgres", func(tb testing.TB, e memory.Embedder) memory.Store {
		var b [6]byte
		rand.Read(b[:])
		schema := "quire_recall_" + hex.EncodeToString(b[:])
		tb.Cleanup(func() {
			ctx := context.Background()
			if conn, err := pgx.Connect(ctx, url); err == nil {
				conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
				conn.Close(ctx)
			}
		})
		s, err := pgstore.Open(context.Background(), pgstore.Options{URL: url, Schema: schema, Embedder: e, MaxConns: 4})
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}})
}

// BenchmarkRecall prints recall@6 per category for each store and
// embedder (`make bench-recall`); ns/op is one pass over every question.
func BenchmarkRecall(b *testing.B) {
	convs := devSet(b)
	for _, st := range stores(b) {
		for _, e := range embedders(b) {
			b.Run(st.name+"/"+name(e), func(b *testing.B) {
				s := st.open(b, e)
				defer s.Close()
				var score Score
				var err error
				for b.Loop() {
					score, _, err = Run(context.Background(), s, convs, 6, memory.Query{})
					if err != nil {
						b.Fatal(err)
					}
				}
				for _, k := range []string{"all", "multi-hop", "temporal", "open-domain", "single-hop"} {
					b.ReportMetric(score.Recall(k), "recall-"+k)
				}
				fmt.Printf("recall@6 %-8s %-7s %s\n", st.name, name(e), score)
				around := aroundScore(b, s, convs)
				fmt.Printf("recall@6 %-8s %-7s %s, counting context 1\n", st.name, name(e), around)
			})
		}
	}
}

// TestRecallParity: both stores return the same top-6 for the dev set's
// questions (ties aside) from the first search after indexing.
func TestRecallParity(t *testing.T) {
	convs := devSet(t)
	ss := stores(t)
	if len(ss) < 2 {
		t.Skip("needs QUIRE_TEST_DATABASE_URL")
	}
	for _, e := range embedders(t) {
		t.Run(name(e), func(t *testing.T) {
			ctx := context.Background()
			a, b := ss[0].open(t, e), ss[1].open(t, e)
			defer a.Close()
			defer b.Close()
			_, ha, err := Run(ctx, a, convs, 6, memory.Query{})
			if err != nil {
				t.Fatal(err)
			}
			_, hb, err := Run(ctx, b, convs, 6, memory.Query{})
			if err != nil {
				t.Fatal(err)
			}
			same := 0
			var diffs []string
			for i := range ha {
				if storetest.SameTop(ha[i], hb[i]) {
					same++
				} else if len(diffs) < 3 {
					diffs = append(diffs, fmt.Sprintf("embedded %s\npostgres %s", storetest.Places(ha[i]), storetest.Places(hb[i])))
				}
			}
			share := float64(same) / float64(len(ha))
			t.Logf("%s: same top-6 for %d of %d questions (%.3f)", name(e), same, len(ha), share)
			if share < 0.99 {
				t.Errorf("same top-6 for %.3f of the questions, want >= 0.99; e.g.\n%s", share, strings.Join(diffs, "\n"))
			}
		})
	}
}

// aroundScore is recall@6 counting the context of one chunk on each side
// of a hit (FoundAround), against store s already indexed.
func aroundScore(b *testing.B, s memory.Store, convs []Conversation) Score {
	var score Score
	for _, c := range convs {
		for _, q := range c.Questions {
			hits, err := s.Search(context.Background(), c.Agent, memory.Query{Text: q.Text, Limit: 6, Context: 1})
			if err != nil {
				b.Fatal(err)
			}
			score.Add(q.Category, FoundAround(q, hits))
		}
	}
	return score
}
