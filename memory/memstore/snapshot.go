package memstore

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/quirehq/quire/memory"
)

// snapshotVersion changes whenever what a snapshot holds, or how chunks
// are made from documents, changes.
const snapshotVersion = 1

// snapshot is one agent's index as Save writes it.
type snapshot struct {
	Version int
	Model   string
	Commit  string
	Docs    []snapshotDoc
	Chunks  []memory.Chunk
	Vectors [][]float32
}

type snapshotDoc struct{ User, Path, Hash string }

// Save writes agent's index (documents, chunks with their vectors and the
// indexed commit) to w, for Load in a later process: `quire search` keeps
// one per workspace and agent, so an unchanged memory is neither
// re-chunked nor re-embedded, and the embedding cache is not read.
func (s *Store) Save(agent string, w io.Writer) error {
	s.mu.RLock()
	ix := s.agents[agent]
	var snap snapshot
	if ix != nil {
		snap = snapshot{Version: snapshotVersion, Model: s.opts.Embedder.Model(), Commit: ix.commit,
			Chunks: slices.Clone(ix.chunks), Vectors: slices.Clone(ix.vectors)}
		for k, h := range ix.docs {
			snap.Docs = append(snap.Docs, snapshotDoc{k.user, k.path, h})
		}
	}
	s.mu.RUnlock()
	if ix == nil {
		return fmt.Errorf("save %s: not indexed", agent)
	}
	err := gob.NewEncoder(w).Encode(&snap)
	// snap's vectors may be slices of ix's vector arena, which ix keeps
	// mapped.
	runtime.KeepAlive(ix)
	if err != nil {
		return fmt.Errorf("save %s: %w", agent, err)
	}
	return nil
}

// Load makes what Save wrote agent's index. A snapshot of another
// embedder or version, or a damaged one, is an error and changes nothing;
// the next Index then builds the index as usual.
func (s *Store) Load(agent string, r io.Reader) error {
	var snap snapshot
	if err := gob.NewDecoder(r).Decode(&snap); err != nil {
		return fmt.Errorf("load %s: %w", agent, err)
	}
	if snap.Version != snapshotVersion || snap.Model != s.opts.Embedder.Model() {
		return fmt.Errorf("load %s: snapshot of version %d, model %q; want %d, %q", agent, snap.Version, snap.Model, snapshotVersion, s.opts.Embedder.Model())
	}
	if len(snap.Vectors) != len(snap.Chunks) {
		return errors.New("load " + agent + ": damaged snapshot")
	}
	dims := s.opts.Embedder.Dimensions()
	next := &agentIndex{commit: snap.Commit, docs: map[docKey]string{}}
	for _, d := range snap.Docs {
		next.docs[docKey{d.User, d.Path}] = d.Hash
	}
	for i, c := range snap.Chunks {
		if _, ok := next.docs[docKey{c.User, c.Path}]; !ok {
			return errors.New("load " + agent + ": damaged snapshot: a chunk of no document")
		}
		if i > 0 && chunkOrder(snap.Chunks[i-1], c) >= 0 {
			return errors.New("load " + agent + ": damaged snapshot: chunks out of order")
		}
		v := snap.Vectors[i]
		if v != nil && len(v) != dims {
			v = nil // of another dimension: embedded again by Backfill
		}
		next.chunks = append(next.chunks, c)
		next.vectors = append(next.vectors, v)
	}
	next.byUser = byUser(next.chunks)
	next.text = s.textIndex(next.chunks)
	next.index(s.vectorPlan(), nil, nil)
	s.indexMu.Lock()
	defer s.indexMu.Unlock()
	s.mu.Lock()
	old := s.agents[agent]
	s.agents[agent] = next
	s.mu.Unlock()
	s.reference(old, nil, next.chunks)
	return nil
}
