package storetest

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quirehq/quire/memory"
)

// Corpus is a synthetic memory for benchmarks: documents of ten
// paragraphs, each paragraph one chunk of 500–1,000 chars, one document in
// five agent-level and the rest spread over Users users. Like real notes,
// each document is about one of 250 topics: half of its words come from
// the topic's 40-word vocabulary, half from a Zipf-distributed general
// vocabulary of 4,000 pseudo-words. Queries are four words of a random
// chunk plus one random word.
type Corpus struct {
	Docs    []memory.Document
	Chunks  int
	Users   []string
	Queries []string

	// Where each chunk text came from, and each query's chunk, for
	// MixtureEmbedder and Source.
	chunkTopic, chunkDoc []int
	chunkText            []string
	chunkIndex           map[string]int
	queryChunk           map[string]int
	topics               int
}

// NewCorpus returns a deterministic corpus of about chunks chunks.
func NewCorpus(chunks int, seed uint64) *Corpus {
	r := rand.New(rand.NewPCG(seed, 1))
	syllables := []string{"ka", "lo", "mi", "ne", "ru", "ta", "po", "si", "de", "va", "gor", "lin", "bek", "sa", "tu", "mar", "ven", "ok", "ri", "ul"}
	vocab := make([]string, 4000)
	for i := range vocab {
		var b strings.Builder
		for n := 2 + i%3; n > 0; n-- {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		vocab[i] = b.String()
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	topics := make([][]string, 250)
	for i := range topics {
		for k := 0; k < 40; k++ {
			topics[i] = append(topics[i], vocab[r.IntN(len(vocab))])
		}
	}
	c := &Corpus{chunkIndex: map[string]int{}, queryChunk: map[string]int{}, topics: len(topics)}
	for u := 0; u < 80; u++ {
		c.Users = append(c.Users, fmt.Sprintf("user-%02d", u))
	}
	var paragraphs []string
	for d := 0; c.Chunks < chunks; d++ {
		var doc strings.Builder
		topicID := r.IntN(len(topics))
		topic := topics[topicID]
		for p := 0; p < 10 && c.Chunks < chunks; p++ {
			var para strings.Builder
			for para.Len() < 520 {
				if r.IntN(2) == 0 {
					para.WriteString(topic[r.IntN(len(topic))])
				} else {
					para.WriteString(vocab[zipf.Uint64()])
				}
				para.WriteString(" ")
				if r.IntN(12) == 0 {
					para.WriteString("\n")
				}
			}
			text := strings.TrimSpace(para.String())
			c.chunkIndex[text] = len(paragraphs)
			c.chunkTopic = append(c.chunkTopic, topicID)
			c.chunkDoc = append(c.chunkDoc, d)
			c.chunkText = append(c.chunkText, text)
			paragraphs = append(paragraphs, text)
			doc.WriteString(text)
			doc.WriteString("\n\n")
			c.Chunks++
		}
		user := ""
		if d%5 != 0 {
			user = c.Users[d%len(c.Users)]
		}
		c.Docs = append(c.Docs, memory.NewDocument(fmt.Sprintf("memory/2026-%02d-%02d-%d.md", 1+d%12, 1+d%28, d), user, doc.String()))
	}
	for q := 0; q < 200; q++ {
		from := r.IntN(len(paragraphs))
		words := strings.Fields(paragraphs[from])
		var picked []string
		for k := 0; k < 4; k++ {
			picked = append(picked, words[r.IntN(len(words))])
		}
		picked = append(picked, vocab[r.IntN(len(vocab))])
		query := strings.Join(picked, " ")
		c.queryChunk[query] = from
		c.Queries = append(c.Queries, query)
	}
	return c
}

// Source returns the text of the chunk query was drawn from and a user
// who can see it: its document's owner, or for agent-level memory the
// given fallback user.
func (c *Corpus) Source(query, fallback string) (text, user string) {
	i := c.queryChunk[query]
	user = c.Docs[c.chunkDoc[i]].User
	if user == "" {
		user = fallback
	}
	return c.chunkText[i], user
}

// Percentile returns the p-th percentile (0–100) of ds, which it sorts.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds)-1) * p / 100)
	return ds[i]
}

// MixtureEmbedder returns an embedder that imitates the geometry of a
// semantic embedding model on this corpus, for benchmarking vector
// indexes: a chunk's vector is its topic's centroid plus its document's
// offset plus per-chunk noise; a query's vector is the vector of the chunk
// it was drawn from plus noise (a paraphrase lands near its source). Texts
// the corpus does not know get pure noise. Vectors are unit length and
// deterministic.
func (c *Corpus) MixtureEmbedder(dims int) memory.Embedder {
	return &mixture{c: c, dims: dims}
}

type mixture struct {
	c    *Corpus
	dims int
}

func (m *mixture) Model() string   { return fmt.Sprintf("bench-mixture-%d", m.dims) }
func (m *mixture) Dimensions() int { return m.dims }

func (m *mixture) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = m.vector(t)
	}
	return out, nil
}

func (m *mixture) gaussian(seed uint64, scale float32, into []float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	var norm float64
	g := make([]float64, len(into))
	for i := range g {
		g[i] = r.NormFloat64()
		norm += g[i] * g[i]
	}
	inv := 1 / math.Sqrt(norm)
	for i := range into {
		into[i] += scale * float32(g[i]*inv)
	}
}

func (m *mixture) chunkVector(i int) []float32 {
	v := make([]float32, m.dims)
	m.gaussian(uint64(m.c.chunkTopic[i])<<32|1, 1, v)
	m.gaussian(uint64(m.c.chunkDoc[i])<<32|2, 0.8, v)
	m.gaussian(uint64(i)<<32|3, 0.5, v)
	return v
}

func (m *mixture) vector(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := h.Sum64()
	var v []float32
	if i, ok := m.c.chunkIndex[text]; ok {
		v = m.chunkVector(i)
	} else if i, ok := m.c.queryChunk[text]; ok {
		v = m.chunkVector(i)
		m.gaussian(seed, 0.5, v)
	} else {
		v = make([]float32, m.dims)
		m.gaussian(seed, 1, v)
	}
	memory.Normalize(v)
	return v
}

// BenchSearch runs b.N searches of the corpus's queries on s (agent
// "bench", each as a user who can see the query's source chunk) and
// reports the latency's p50 and p99 and source@6: the share of queries
// whose source chunk is among the hits, the quality a speed-up must not
// cost. Both stores' BenchmarkSearch use it, so their numbers compare.
func (c *Corpus) BenchSearch(b *testing.B, s memory.Store) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	found := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := c.Queries[i%len(c.Queries)]
		src, user := c.Source(q, c.Users[i%len(c.Users)])
		start := time.Now()
		hits, err := s.Search(ctx, "bench", memory.Query{Text: q, User: user})
		lat = append(lat, time.Since(start))
		if err != nil || len(hits) == 0 {
			b.Fatalf("search: %d hits, %v", len(hits), err)
		}
		if slices.ContainsFunc(hits, func(h memory.Hit) bool { return h.Text == src }) {
			found++
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(Percentile(lat, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(Percentile(lat, 99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(found)/float64(b.N), "source@6")
}
