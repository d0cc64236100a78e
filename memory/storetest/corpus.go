package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
	c := &Corpus{}
	for u := 0; u < 80; u++ {
		c.Users = append(c.Users, fmt.Sprintf("user-%02d", u))
	}
	var paragraphs []string
	for d := 0; c.Chunks < chunks; d++ {
		var doc strings.Builder
		topic := topics[r.IntN(len(topics))]
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
		words := strings.Fields(paragraphs[r.IntN(len(paragraphs))])
		var picked []string
		for k := 0; k < 4; k++ {
			picked = append(picked, words[r.IntN(len(words))])
		}
		picked = append(picked, vocab[r.IntN(len(vocab))])
		c.Queries = append(c.Queries, strings.Join(picked, " "))
	}
	return c
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
