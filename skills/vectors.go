package skills

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
)

// maxCachedVectors bounds a Vectors cache: past it, the cache starts over
// (skill sets are small; only a long run of edits fills it).
const maxCachedVectors = 1 << 16

// Vectors caches the embeddings of skills by embedder model and skill
// version: the hash of the text embedded (name and description), so a
// reload re-embeds only the skills whose text changed, and the vectors of
// one skill version are shared by every agent and deployment that loads
// it. A Vectors is safe for concurrent use; the zero value is ready.
type Vectors struct {
	mu       sync.Mutex
	m        map[vectorKey][]float32
	embedded int
}

type vectorKey struct {
	model string
	sum   [sha256.Size]byte
}

// Embedded returns how many skill texts the cache has had embedded: the
// misses.
func (v *Vectors) Embedded() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.embedded
}

// embedText is the text of s that is embedded and hashed.
func embedText(s *Skill) string { return s.Name + ": " + s.Description }

// vectors returns the vector of every skill of list, embedding (in one
// call) only those the cache lacks. A nil v embeds every skill.
func (v *Vectors) vectors(ctx context.Context, emb Embedder, list []*Skill) ([][]float32, error) {
	out := make([][]float32, len(list))
	keys := make([]vectorKey, len(list))
	var missing []int
	var texts []string
	if v != nil {
		v.mu.Lock()
	}
	for i, sk := range list {
		text := embedText(sk)
		keys[i] = vectorKey{emb.Model(), sha256.Sum256([]byte(text))}
		if v != nil {
			if vec, ok := v.m[keys[i]]; ok {
				out[i] = vec
				continue
			}
		}
		missing, texts = append(missing, i), append(texts, text)
	}
	if v != nil {
		v.mu.Unlock()
	}
	if len(texts) == 0 {
		return out, nil
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed %d skills: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed %d skills: embedder returned %d vectors", len(texts), len(vecs))
	}
	for j, i := range missing {
		out[i] = vecs[j]
	}
	if v != nil {
		v.store(keys, missing, vecs)
	}
	return out, nil
}

// store keeps the vectors embedded for the skills at missing.
func (v *Vectors) store(keys []vectorKey, missing []int, vecs [][]float32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil || len(v.m)+len(vecs) > maxCachedVectors {
		v.m = make(map[vectorKey][]float32, len(keys))
	}
	for j, i := range missing {
		v.m[keys[i]] = vecs[j]
	}
	v.embedded += len(vecs)
}
