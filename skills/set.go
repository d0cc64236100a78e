package skills

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/quirehq/quire/memory/bm25"
	"github.com/quirehq/quire/prompt"
	"github.com/quirehq/quire/workspace"
)

// DefaultLimit is the number of search results when the caller gives none.
const DefaultLimit = 5

// Hybrid weights: score = TextWeight × BM25/maxBM25 + VectorWeight × cosine.
const (
	TextWeight   = 0.3
	VectorWeight = 0.7
)

// Embedder turns texts into vectors. memory's Embedder satisfies it.
type Embedder interface {
	// Model names the model; it keys the Vectors cache.
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Set is one immutable version of an agent's loaded skills with its BM25
// index. Assembling a prompt or searching reads only the Set, never the
// disk. A Set is safe for concurrent use.
type Set struct {
	version  uint64
	skills   []*Skill // sorted by slug; BM25 document i is skills[i]
	public   []bool   // by document: access allows everyone
	private  bool     // some skill is not public
	shadows  []Shadow
	problems []workspace.Problem
	hitPool  sync.Pool // of *searchScratch

	// The BM25 index is built on the first search: listing, showing and
	// prompting (a one-shot CLI, a cold prompt) never need it.
	indexOnce sync.Once
	index     *bm25.Index

	// docOf maps a slug to its index in skills (its BM25 document id),
	// made on the first lookup by slug: prompting never needs it.
	docOnce sync.Once
	docOf   map[string]int
}

func newSet(version uint64, list []*Skill, shadows []Shadow, problems []workspace.Problem) *Set {
	s := &Set{version: version, skills: list, public: make([]bool, len(list)), shadows: shadows, problems: problems}
	for i, sk := range list {
		s.public[i] = sk.Access.public()
		s.private = s.private || !s.public[i]
	}
	words := (len(list) + 63) / 64
	s.hitPool.New = func() any {
		return &searchScratch{hits: make([]bm25.Hit, 0, DefaultLimit), allowed: make([]uint64, words)}
	}
	return s
}

// doc returns the index in skills of the skill named slug.
func (s *Set) doc(slug string) (int, bool) {
	s.docOnce.Do(func() {
		s.docOf = make(map[string]int, len(s.skills))
		for i, sk := range s.skills {
			s.docOf[sk.Slug] = i
		}
	})
	i, ok := s.docOf[slug]
	return i, ok
}

// bm25 returns the index over name + description, building it once.
func (s *Set) bm25() *bm25.Index {
	s.indexOnce.Do(func() {
		var b bm25.Builder
		for _, sk := range s.skills {
			b.Add(sk.Name + " " + sk.Description)
		}
		s.index = b.Build()
	})
	return s.index
}

// Version returns the reload counter the Set was loaded at; a later Set of
// the same Watcher has a larger version.
func (s *Set) Version() uint64 { return s.version }

// Skills returns every skill in effect, sorted by slug, regardless of
// access. Callers must not modify the slice.
func (s *Set) Skills() []*Skill { return s.skills }

// Skill returns the skill in effect for slug, regardless of access.
func (s *Set) Skill(slug string) (*Skill, bool) {
	i, ok := s.doc(slug)
	if !ok {
		return nil, false
	}
	return s.skills[i], true
}

// Shadows returns the skills hidden by a higher tier, sorted by slug.
func (s *Set) Shadows() []Shadow { return s.shadows }

// Problems returns the problems found while loading, in tier then slug order.
func (s *Set) Problems() []workspace.Problem { return s.problems }

// List returns the skills req may see, sorted by slug.
func (s *Set) List(req Request) []*Skill {
	var out []*Skill
	for _, sk := range s.skills {
		if req.Permits(sk) {
			out = append(out, sk)
		}
	}
	return out
}

// Show returns the skill named slug if req may see it.
func (s *Set) Show(req Request, slug string) (*Skill, bool) {
	sk, ok := s.Skill(slug)
	if !ok || !req.Permits(sk) {
		return nil, false
	}
	return sk, true
}

// PromptSkills returns the entries of the prompt's Skills section for req,
// sorted by slug. Whether they are listed inline or replaced by a pointer
// to skill search is prompt's decision (prompt.InlineSkillCount and
// prompt.InlineSkillTokens), made on every assembly.
func (s *Set) PromptSkills(req Request) []prompt.Skill {
	var out []prompt.Skill
	for _, sk := range s.skills {
		if req.Permits(sk) {
			out = append(out, prompt.Skill{Name: sk.Slug, Description: sk.Description, Location: sk.Location, Builtin: sk.Tier == TierBuiltin})
		}
	}
	return out
}

// Hit is one skill search result.
type Hit struct {
	Skill *Skill
	Score float64
}

// Search appends to dst[:0] the best BM25 matches of query over the name
// and description of the skills req may see (limit ≤ 0 means
// DefaultLimit), best first, ties by slug. Scores are raw BM25 scores. With
// cap(dst) ≥ limit, a search allocates nothing.
func (s *Set) Search(query string, req Request, limit int, dst []Hit) []Hit {
	if limit <= 0 {
		limit = DefaultLimit
	}
	dst = dst[:0]
	sc := s.hitPool.Get().(*searchScratch)
	var filter func(doc int) bool
	list := req.list()
	if list != nil || s.private {
		// The allow list becomes a bitset of document ids, so the filter
		// costs a bit test per matching skill, not a scan of the list.
		if list != nil {
			clear(sc.allowed)
			for _, slug := range list {
				if i, ok := s.doc(slug); ok {
					sc.allowed[i>>6] |= 1 << (i & 63)
				}
			}
		}
		filter = func(doc int) bool {
			if list != nil && sc.allowed[doc>>6]&(1<<(doc&63)) == 0 {
				return false
			}
			return s.public[doc] || s.skills[doc].Access.Allows(&req)
		}
	}
	hits := s.bm25().Search(query, limit, sc.hits, filter)
	for _, h := range hits {
		dst = append(dst, Hit{Skill: s.skills[h.Doc], Score: h.Score})
	}
	sc.hits = hits[:0]
	s.hitPool.Put(sc)
	return dst
}

// searchScratch is the reusable memory of one Search.
type searchScratch struct {
	hits    []bm25.Hit
	allowed []uint64 // bitset of allowed document ids
}

// HybridSearch ranks the skills req may see by
// TextWeight × BM25/maxBM25 + VectorWeight × cosine(query, name + description);
// when BM25 finds nothing the cosine gets weight 1, and when emb is nil or
// returns no vector, the normalised BM25 score gets weight 1. Skill vectors
// come from cache, by model and skill version, when cache is not nil;
// only the skills it lacks are embedded. Results are best first, ties by
// slug, at most limit (≤ 0: DefaultLimit); a skill with neither a BM25 match
// nor a positive cosine is not a result.
func (s *Set) HybridSearch(ctx context.Context, emb Embedder, cache *Vectors, query string, req Request, limit int) ([]Hit, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	text := s.bm25().Search(query, 0, nil, func(doc int) bool { return req.Permits(s.skills[doc]) })
	var qv []float32
	var vecs [][]float32
	if emb != nil && len(s.skills) > 0 {
		var err error
		if qv, vecs, err = s.queryVectors(ctx, emb, cache, query); err != nil {
			return nil, err
		}
	}
	tw, vw := TextWeight, VectorWeight
	switch {
	case len(qv) == 0:
		tw, vw = 1, 0
	case len(text) == 0:
		tw, vw = 0, 1
	}
	out := s.fuse(text, qv, vecs, tw, vw, req)
	slices.SortStableFunc(out, func(a, b Hit) int { // stable: slug order on ties
		return cmp.Compare(b.Score, a.Score)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// queryVectors embeds the query and returns its vector with the skills'
// vectors.
func (s *Set) queryVectors(ctx context.Context, emb Embedder, cache *Vectors, query string) (qv []float32, vecs [][]float32, err error) {
	if vecs, err = cache.vectors(ctx, emb, s.skills); err != nil {
		return nil, nil, err
	}
	qs, err := emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, nil, fmt.Errorf("embed skill query: %w", err)
	}
	if len(qs) > 0 {
		qv = qs[0]
	}
	return qv, vecs, nil
}

// fuse scores every skill req permits that either side matched: tw × its
// BM25 score scaled by the best plus vw × its positive cosine to qv.
// The hits are in skill order.
func (s *Set) fuse(text []bm25.Hit, qv []float32, vecs [][]float32, tw, vw float64, req Request) []Hit {
	bm := make(map[int]float64, len(text))
	maxBM := 0.0
	for _, h := range text {
		bm[h.Doc] = h.Score
		maxBM = math.Max(maxBM, h.Score)
	}
	var out []Hit
	for i, sk := range s.skills {
		if !req.Permits(sk) {
			continue
		}
		score, matched := 0.0, false
		if b, ok := bm[i]; ok {
			score += tw * b / maxBM
			matched = true
		}
		if vw > 0 && i < len(vecs) {
			if c := cosine(qv, vecs[i]); c > 0 {
				score += vw * c
				matched = true
			}
		}
		if matched {
			out = append(out, Hit{Skill: sk, Score: score})
		}
	}
	return out
}

// cosine returns the cosine similarity of a and b, 0 when either is zero or
// their lengths differ.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
