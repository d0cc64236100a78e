// Package memstore is the embedded, in-process memory store: the
// zero-setup default. Per agent it keeps the chunks in memory with a BM25
// index (a bm25.Dynamic: a change of the agent's memory adds and removes
// the chunks of the documents it changes, the others are not read again)
// and cosine over the vectors: an exact scan up to 10,000 vectors, above
// that an inverted-file index (ivf.go), or, for vectors its lists cannot
// split (the builtin embedder's hashed words), a sieve that scores every
// visible chunk on the query's largest dimensions first (sieve.go); the
// recall of both against the scan is measured (TestIVFRecall, TestSieve,
// BenchmarkSearch). Nothing but the embedding cache is
// persisted: the store is rebuilt from the workspace at start, and the
// cache on disk spares re-embedding unchanged chunks. The cache file is
// a log each new vector is appended to once (cachefile.go); vectors no
// indexed chunk holds any more are dropped, and the file is compacted
// when they take more than half of it.
package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
)

// Options configures a Store.
type Options struct {
	// Embedder embeds chunks and queries; nil means memory.None{}.
	Embedder memory.Embedder
	// CacheFile, when set, is where the embedding cache is loaded from and
	// saved to.
	CacheFile string
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// ExactVectors is the most vectors an agent may hold for the vector
	// side to scan them all; a larger agent gets an approximate index
	// (see ivf). 0 means 10,000, the PostgreSQL store's threshold;
	// negative means always approximate (tests).
	ExactVectors int
}

// Store is the embedded memory store. It is safe for concurrent use.
type Store struct {
	opts  Options
	cache *memory.Cache
	log   *slog.Logger
	terms memory.Analyzer

	indexMu sync.Mutex // serialises Index and Load calls; guards refs
	// refs counts, by chunk hash, the chunks of the indexed agents: an
	// embedding whose count falls to zero is dropped from the cache.
	refs map[string]int32
	// tails keeps by agent the Docs of recently changed documents' last
	// chunks (see tails). Guarded by indexMu.
	tails       map[string]*tails
	cacheMu     sync.Mutex // guards cacheLoaded and file
	cacheLoaded bool
	file        cacheFile
	mu          sync.RWMutex
	agents      map[string]*agentIndex
}

var _ memory.Store = (*Store)(nil)

// agentIndex is one agent's memory. It is replaced, never mutated, once
// published, except for vectors filled in by Backfill under the write
// lock, and its text index: the next index's changes that one in place
// under the write lock (see publish), so an index is searched only while
// it is the agent's.
type agentIndex struct {
	commit  string
	docs    map[docKey]string // hash by document
	chunks  []memory.Chunk    // by user, path, line
	vectors [][]float32       // unit length, aligned with chunks; nil = pending
	text    *bm25.Dynamic     // place = chunk position; shared with the index it replaced
	ann     *ivf              // approximate vector index; nil = exact scan
	owner   []int32           // by position: 0 agent-level, else 1 + the user's in users
	users   map[string]int32  // 1 + index by user id
	byUser  map[string][]int  // chunk positions by user ("" = agent-level)
	// edits are the changes of docs, which is the map of the index it
	// replaces (or a new one): made when it is published (install), so
	// that the index before it keeps its documents until then.
	edits []docEdit
}

// docEdit sets a document's hash in an index's docs, or deletes it;
// text is the document's (for tails).
type docEdit struct {
	key        docKey
	hash, text string
	gone       bool
}

// install publishes ix as agent's index, making its edits. The caller
// holds the write lock.
func (s *Store) install(agent string, ix *agentIndex) {
	for _, e := range ix.edits {
		if e.gone {
			delete(ix.docs, e.key)
		} else {
			ix.docs[e.key] = e.hash
		}
	}
	ix.edits = nil
	s.agents[agent] = ix
}

type docKey struct{ user, path string }

// New returns an empty store, loading the embedding cache from
// opts.CacheFile when it exists.
func New(opts Options) (*Store, error) {
	if opts.Embedder == nil {
		opts.Embedder = memory.None{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{opts: opts, cache: &memory.Cache{}, log: log.With("component", "memstore"), agents: map[string]*agentIndex{},
		refs: map[string]int32{}, tails: map[string]*tails{}, file: cacheFile{path: opts.CacheFile}}
	if opts.CacheFile != "" {
		if _, err := os.Stat(opts.CacheFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read embedding cache: %w", err)
		}
	}
	return s, nil
}

// loadCache reads the embedding cache file the first time vectors are
// needed: a store whose chunks all come from a snapshot (Load) never
// reads it.
func (s *Store) loadCache() error {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.cacheLoaded || s.opts.CacheFile == "" {
		return nil
	}
	s.cacheLoaded = true
	return s.file.load(s.cache, s.log.Warn)
}

// Index implements memory.Store.
func (s *Store) Index(ctx context.Context, agent, commit string, docs []memory.Document) (memory.IndexStats, error) {
	stats := memory.IndexStats{Documents: len(docs)}
	s.indexMu.Lock()
	defer s.indexMu.Unlock()
	s.mu.RLock()
	old := s.agents[agent]
	s.mu.RUnlock()
	if old != nil && commit != "" && old.commit == commit {
		stats.Unchanged = len(docs)
		return stats, nil
	}
	next := &agentIndex{commit: commit}
	tl := s.tails[agent]
	if tl == nil {
		tl = &tails{}
		s.tails[agent] = tl
	}
	kept, renewed, fresh, err := next.diff(agent, old, tl, docs, &stats)
	if err != nil {
		return stats, err
	}
	vectors, err := s.embedFresh(ctx, agent, fresh, &stats)
	if err != nil {
		return stats, err
	}
	added := make([]indexedChunk, len(fresh))
	for i, c := range fresh {
		added[i] = indexedChunk{c: c, v: unit(vectors[i]), place: int32(-1 - i)}
	}
	carried, order := s.fill(next, old, kept, renewed, added, &stats)
	text, change := s.textChange(old, tl, kept, fresh, order)
	edits := next.edits
	var prev *ivf
	if old != nil {
		prev = old.ann
	}
	next.index(s.vectorPlan(), prev, carried)
	if memory.Enabled(s.opts.Embedder) {
		for _, v := range vectors {
			if v == nil {
				stats.Pending++
			} else {
				stats.Embedded++
			}
		}
	}
	switch compacted := s.publish(agent, next, text, change); {
	case next.text == text:
		tl.kept(text, edits, fresh, change.Added)
	case compacted:
		tl.kept(text, edits, fresh, change.Added)
		tl.renumber(next.text)
	default:
		*tl = tails{} // made anew after a refused change: start over
	}
	s.reference(old, kept, fresh)
	if err := s.saveCache(); err != nil {
		return stats, err
	}
	return stats, nil
}

// textChange is what turns old's text index into next's: old's own
// (a new one when there is none) and the change that adds the fresh
// chunks, removes old's chunks not kept and puts them in order (by
// next's place: an old place, or -1 - i for fresh[i]). It analyses the
// chunks' text without changing the index, which old's searches go on
// reading: of a removed chunk, only when tl lacks its Doc; of a fresh
// chunk that extends the removed last chunk of its document, only what
// it adds.
func (s *Store) textChange(old *agentIndex, tl *tails, kept []chunkFate, fresh []memory.Chunk, order []int32) (*bm25.Dynamic, bm25.Change) {
	ch := bm25.Change{Order: order, Added: make([]bm25.Doc, len(fresh))}
	if old == nil {
		text := bm25.NewDynamic(s.terms.Each)
		for i, c := range fresh {
			ch.Added[i] = text.Analyze(memory.IndexText(c))
		}
		return text, ch
	}
	// A removed chunk that was the last of its document, by its first
	// line: the chunk the document's grown last chunk extends.
	type removedChunk struct {
		c   memory.Chunk
		doc bm25.Doc
	}
	type at struct {
		docKey
		line int
	}
	var grown map[at]removedChunk
	for i, c := range old.chunks {
		if kept[i] != removed {
			continue
		}
		doc := tl.removal(old.text, c)
		ch.Removed = append(ch.Removed, bm25.Removal{Place: int32(i), Doc: doc})
		if i+1 == len(old.chunks) || old.chunks[i+1].User != c.User || old.chunks[i+1].Path != c.Path {
			if grown == nil {
				grown = map[at]removedChunk{}
			}
			grown[at{docKey{c.User, c.Path}, c.StartLine}] = removedChunk{c, doc}
		}
	}
	for i, c := range fresh {
		if r, ok := grown[at{docKey{c.User, c.Path}, c.StartLine}]; ok {
			if doc, ok := extension(old.text, c, r.c, r.doc); ok {
				ch.Added[i] = doc
				continue
			}
		}
		ch.Added[i] = old.text.Analyze(memory.IndexText(c))
	}
	return old.text, ch
}

// publish makes next agent's index, its text index text once change is
// applied to it: under the write lock, so that no search reads text as
// it changes (old, which shares it, is not searched from then on). A
// change that does not fit (a bug) is logged and the text index is made
// again from next's chunks; one that leaves much garbage is followed by
// a compaction, made outside the lock, which it reports.
func (s *Store) publish(agent string, next *agentIndex, text *bm25.Dynamic, change bm25.Change) (compacted bool) {
	s.mu.Lock()
	err := text.Update(change)
	if err == nil {
		next.text = text
		s.install(agent, next)
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		s.log.Warn("text index change refused; made again", "agent", agent, "err", err)
		text = s.textIndex(next.chunks)
	case text.Garbage():
		text, compacted = text.Compact(), true
	default:
		return false
	}
	s.mu.Lock()
	next.text = text
	s.install(agent, next)
	s.mu.Unlock()
	return compacted
}

// textIndex is a new text index of chunks, in their order.
func (s *Store) textIndex(chunks []memory.Chunk) *bm25.Dynamic {
	text := bm25.NewDynamic(s.terms.Each)
	ch := bm25.Change{Order: make([]int32, len(chunks)), Added: make([]bm25.Doc, len(chunks))}
	for i, c := range chunks {
		ch.Order[i] = int32(-1 - i)
		ch.Added[i] = text.Analyze(memory.IndexText(c))
	}
	if err := text.Update(ch); err != nil {
		panic("memstore: a new text index refused its chunks: " + err.Error())
	}
	return text
}

// reference counts the fresh chunks and uncounts old's chunks not kept,
// dropping from the cache the embeddings no indexed chunk has any more.
// The caller holds indexMu.
func (s *Store) reference(old *agentIndex, kept []chunkFate, fresh []memory.Chunk) {
	for _, c := range fresh {
		s.refs[c.Hash]++
	}
	if old == nil {
		return
	}
	model, dims := s.opts.Embedder.Model(), s.opts.Embedder.Dimensions()
	var gone int64
	for i, c := range old.chunks {
		if kept[i] != removed {
			continue
		}
		if s.refs[c.Hash]--; s.refs[c.Hash] > 0 {
			continue
		}
		delete(s.refs, c.Hash)
		if s.cache.Delete(model, c.Hash) {
			gone += memory.EntrySize(model, c.Hash, dims)
		}
	}
	if gone > 0 {
		s.cacheMu.Lock()
		s.file.dropped(gone)
		s.cacheMu.Unlock()
	}
}

// chunkFate is what becomes of one of old's chunks in the next index.
type chunkFate uint8

const (
	unchanged chunkFate = iota // its document is unchanged
	same                       // its document changed, not the chunk
	removed                    // gone, or changed
)

// diff records docs in next and sorts them against old: it returns the
// fate of each of old's chunks (nil when old is nil) and the chunks to
// add, counting unchanged, changed and removed documents and the chunks
// of the changed ones in stats. A changed document keeps its chunks
// that are the same as before (under appends to a log, all but the
// last): only the others are removed and added. Next takes old's map of
// documents (a new one when there is none) with the edits that make it
// docs' (applied when next is published), so that a run costs a look-up
// per document, not a new map of them all. Docs out of order (not in
// memory.CompareDocuments' order) are sorted, in a copy, first. A
// document tl holds the last version of is chunked from where that
// version's last chunk starts when it extends it (an append).
func (next *agentIndex) diff(agent string, old *agentIndex, tl *tails, docs []memory.Document, stats *memory.IndexStats) ([]chunkFate, map[int]memory.Chunk, []memory.Chunk, error) {
	if !slices.IsSortedFunc(docs, memory.CompareDocuments) {
		docs = slices.Clone(docs)
		slices.SortFunc(docs, memory.CompareDocuments)
	}
	for i := 1; i < len(docs); i++ {
		if d := docs[i]; memory.CompareDocuments(docs[i-1], d) == 0 {
			return nil, nil, nil, fmt.Errorf("index %s: document %s of user %q appears twice", agent, d.Path, d.User)
		}
	}
	var kept []chunkFate
	renewed := map[int]memory.Chunk{}
	if old != nil {
		kept = make([]chunkFate, len(old.chunks))
		next.docs = old.docs
	} else {
		next.docs = make(map[docKey]string, len(docs))
	}
	var fresh []memory.Chunk
	found := 0 // of old's documents
	for _, d := range docs {
		k := docKey{d.User, d.Path}
		h, had := next.docs[k]
		if had {
			found++
			if h == d.Hash {
				stats.Unchanged++
				continue
			}
		}
		next.edits = append(next.edits, docEdit{key: k, hash: d.Hash, text: d.Text})
		stats.Changed++
		var chunks []memory.Chunk
		if had {
			lo, hi := old.docChunks(k)
			if prev, ok := tl.prevText(k, h); ok {
				chunks = d.ChunksExtending(prev, old.chunks[lo:hi])
			} else {
				chunks = d.ChunksAfter(old.chunks[lo:hi])
			}
		} else {
			chunks = d.Chunks()
		}
		stats.Chunks += len(chunks)
		if had {
			chunks = old.match(k, chunks, kept, renewed)
		}
		fresh = append(fresh, chunks...)
	}
	if found < len(next.docs) {
		for k := range old.docs {
			if _, ok := slices.BinarySearchFunc(docs, memory.Document{User: k.user, Path: k.path}, memory.CompareDocuments); !ok {
				stats.Removed++
				old.match(k, nil, kept, renewed)
				next.edits = append(next.edits, docEdit{key: k, gone: true})
			}
		}
	}
	return kept, renewed, fresh, nil
}

// match marks in kept the chunks of ix's document k that chunks (its
// new chunks, in order) holds as they were (same) and the others
// removed, and returns the chunks ix does not hold. A same chunk's new
// copy goes in renewed: its text lies in the document's new version,
// while the old one's would keep every old version of a log alive.
func (ix *agentIndex) match(k docKey, chunks []memory.Chunk, kept []chunkFate, renewed map[int]memory.Chunk) []memory.Chunk {
	lo, hi := ix.docChunks(k)
	var fresh []memory.Chunk
	for i := lo; i < hi; i++ {
		c := ix.chunks[i]
		for len(chunks) > 0 && chunks[0].StartLine < c.StartLine {
			fresh, chunks = append(fresh, chunks[0]), chunks[1:]
		}
		if len(chunks) > 0 && chunks[0] == c {
			kept[i], renewed[i], chunks = same, chunks[0], chunks[1:]
			continue
		}
		kept[i] = removed
	}
	return append(fresh, chunks...)
}

// docChunks is where document k's chunks are in ix.chunks: [lo, hi).
func (ix *agentIndex) docChunks(k docKey) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(ix.chunks, k, func(c memory.Chunk, k docKey) int {
		return cmp.Or(cmp.Compare(c.User, k.user), cmp.Compare(c.Path, k.path))
	})
	hi = lo
	for hi < len(ix.chunks) && ix.chunks[hi].User == k.user && ix.chunks[hi].Path == k.path {
		hi++
	}
	return lo, hi
}

// embedFresh embeds the fresh chunks through the cache. An embedder failure
// is recorded in stats (the text is indexed, the vectors stay pending); only
// cancellation and an unreadable cache are errors.
func (s *Store) embedFresh(ctx context.Context, agent string, fresh []memory.Chunk, stats *memory.IndexStats) ([][]float32, error) {
	if len(fresh) > 0 && memory.Enabled(s.opts.Embedder) {
		if err := s.loadCache(); err != nil {
			return nil, err
		}
	}
	texts := make([]string, len(fresh))
	hashes := make([]string, len(fresh))
	for i, c := range fresh {
		texts[i], hashes[i] = c.Text, c.Hash
	}
	vectors, err := memory.EmbedCached(ctx, s.opts.Embedder, s.cache, texts, hashes)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("index %s: %w", agent, ctx.Err())
		}
		stats.EmbedError = err
		s.log.Warn("embedder failed; text indexed, vectors pending", "agent", agent, "err", err)
	}
	return vectors, nil
}

// indexedChunk is a chunk with its unit vector (nil = pending) and, for a
// kept chunk, 1 + its list in the previous approximate index (0: none).
// place is the chunk's place in the previous index, or -1 - i for the
// i-th fresh chunk.
type indexedChunk struct {
	c     memory.Chunk
	v     []float32
	list  int32
	place int32
}

// chunkOrder orders chunks by user, path and line: an index's order.
func chunkOrder(a, b memory.Chunk) int {
	return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Path, b.Path), cmp.Compare(a.StartLine, b.StartLine))
}

// fill makes old's kept chunks (kept: each one's fate; renewed: the new
// copies of the same ones), with their vectors, and the added ones
// next's chunks, vectors and per-user positions, in order by user, path
// and line, counting the kept chunks of changed documents embedded or
// pending in stats. It returns, by position, the list each chunk had in
// the previous approximate index (-1: none) and its place
// (indexedChunk.place). Old's chunks are merged as they are read, not
// copied first: a run's cost in the agent's size is one pass.
func (s *Store) fill(next, old *agentIndex, kept []chunkFate, renewed map[int]memory.Chunk, added []indexedChunk, stats *memory.IndexStats) (carried, order []int32) {
	slices.SortFunc(added, func(a, b indexedChunk) int { return chunkOrder(a.c, b.c) })
	n := len(added)
	var oldChunks []memory.Chunk
	if old != nil {
		oldChunks = old.chunks
		for _, f := range kept {
			if f != removed {
				n++
			}
		}
		s.mu.RLock() // Backfill may fill in old.vectors
		defer s.mu.RUnlock()
	}
	enabled := memory.Enabled(s.opts.Embedder)
	next.chunks = make([]memory.Chunk, 0, n)
	next.vectors = make([][]float32, 0, n)
	carried, order = make([]int32, 0, n), make([]int32, 0, n)
	add := func(c memory.Chunk, v []float32, list, place int32) {
		next.chunks = append(next.chunks, c)
		next.vectors = append(next.vectors, v)
		carried = append(carried, list)
		order = append(order, place)
	}
	for i := 0; ; {
		for i < len(oldChunks) && kept[i] == removed {
			i++
		}
		if i == len(oldChunks) && len(added) == 0 {
			break
		}
		if i < len(oldChunks) {
			c := oldChunks[i]
			if kept[i] == same {
				c = renewed[i]
			}
			if len(added) == 0 || chunkOrder(c, added[0].c) < 0 {
				v, list := old.vectors[i], int32(-1)
				if old.ann != nil {
					list = old.ann.list[i]
				}
				add(c, v, list, int32(i))
				switch {
				case kept[i] == unchanged || !enabled:
				case v == nil:
					stats.Pending++
				default:
					stats.Embedded++
				}
				i++
				continue
			}
		}
		it := added[0]
		added = added[1:]
		add(it.c, it.v, it.list-1, it.place)
	}
	next.byUser = byUser(next.chunks)
	return carried, order
}

// byUser is the positions of each user's chunks (in order: by user
// first), slices of one array.
func byUser(chunks []memory.Chunk) map[string][]int {
	all := make([]int, len(chunks))
	out := map[string][]int{}
	for i := 0; i < len(chunks); {
		j := i
		for ; j < len(chunks) && chunks[j].User == chunks[i].User; j++ {
			all[j] = j
		}
		out[chunks[i].User] = all[i:j:j]
		i = j
	}
	return out
}

// unit returns a unit-length copy of v (nil stays nil).
func unit(v []float32) []float32 {
	if v == nil {
		return nil
	}
	u := slices.Clone(v)
	memory.Normalize(u)
	return u
}

// Search implements memory.Store.
func (s *Store) Search(ctx context.Context, agent string, q memory.Query) ([]memory.Hit, error) {
	n := memory.CandidateLimit(q.Limit)
	var qv []float32
	if memory.Enabled(s.opts.Embedder) {
		vs, err := s.opts.Embedder.Embed(ctx, []string{q.Text})
		if err != nil || len(vs) != 1 || len(vs[0]) != s.opts.Embedder.Dimensions() {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.log.Warn("query embedding failed; full-text only", "agent", agent, "err", err)
		} else {
			qv = unit(vs[0])
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix := s.agents[agent]
	if ix == nil {
		return []memory.Hit{}, nil
	}
	uid := ix.users[q.User] // 0 (agent-level only) for a user without memory
	visible := func(i int) bool { o := ix.owner[i]; return o == 0 || o == uid }
	terms := memory.QueryTerms(&s.terms, q)
	df := make([]int, len(terms))
	for i, t := range terms {
		df[i] = ix.text.DF(t)
	}
	sides := 1
	if qv != nil {
		sides = 2
	}
	cands := make([]memory.Candidate, 0, sides*n)
	text := ix.text.SearchTerms(terms, memory.Selecting(df, len(ix.chunks)), n, make([]bm25.Hit, 0, n), visible)
	for _, h := range text {
		c := memory.Candidate{Chunk: ix.chunks[h.Doc], TextScore: h.Score}
		if v := ix.vectors[h.Doc]; qv != nil && len(v) == len(qv) {
			c.VectorScore = float64(dot(v, qv))
		}
		cands = append(cands, c)
	}
	if qv != nil {
		found := make([]int, len(text))
		for j, h := range text {
			found[j] = h.Doc
		}
		slices.Sort(found)
		for _, i := range ix.nearest(qv, n, q.User) {
			if _, ok := slices.BinarySearch(found, i.pos); !ok {
				cands = append(cands, memory.Candidate{Chunk: ix.chunks[i.pos], TextScore: ix.text.Score(terms, i.pos), VectorScore: i.score})
			}
		}
	}
	hits := memory.Rank(cands, q.RankOptions(qv != nil))
	ix.addContext(hits, q.ContextSize())
	return hits, nil
}

// addContext gives each hit its n neighbouring chunks on each side.
func (ix *agentIndex) addContext(hits []memory.Hit, n int) {
	if n == 0 {
		return
	}
	for i, h := range hits {
		pos, ok := slices.BinarySearchFunc(ix.chunks, h, func(c memory.Chunk, h memory.Hit) int {
			return cmp.Or(cmp.Compare(c.User, h.User), cmp.Compare(c.Path, h.Path), cmp.Compare(c.StartLine, h.StartLine))
		})
		if ok {
			hits[i].Context = memory.Neighbours(ix.chunks, pos, n)
		}
	}
}

// IndexedCommit implements memory.Store.
func (s *Store) IndexedCommit(_ context.Context, agent string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ix := s.agents[agent]; ix != nil {
		return ix.commit, nil
	}
	return "", nil
}

// Chunks implements memory.Store.
func (s *Store) Chunks(_ context.Context, agent string) ([]memory.Chunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ix := s.agents[agent]; ix != nil {
		return slices.Clone(ix.chunks), nil
	}
	return []memory.Chunk{}, nil
}

// Backfill implements memory.Store.
func (s *Store) Backfill(ctx context.Context) (int, error) {
	if !memory.Enabled(s.opts.Embedder) {
		return 0, nil
	}
	if err := s.loadCache(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	type pending struct {
		ix *agentIndex
		i  int
	}
	var todo []pending
	var texts, hashes []string
	for _, ix := range s.agents {
		for i, v := range ix.vectors {
			if v == nil {
				todo = append(todo, pending{ix, i})
				texts = append(texts, ix.chunks[i].Text)
				hashes = append(hashes, ix.chunks[i].Hash)
			}
		}
	}
	s.mu.RUnlock()
	vectors, err := memory.EmbedCached(ctx, s.opts.Embedder, s.cache, texts, hashes)
	done := 0
	s.mu.Lock()
	for j, p := range todo {
		if vectors[j] != nil && p.ix.vectors[p.i] == nil {
			p.ix.vectors[p.i] = unit(vectors[j])
			if p.ix.ann != nil {
				p.ix.ann.backfilled(p.ix.chunks[p.i].User, p.i, p.ix.vectors[p.i])
			}
			done++
		}
	}
	s.mu.Unlock()
	if serr := s.saveCache(); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return done, fmt.Errorf("backfill: %w", err)
	}
	return done, nil
}

// saveCache writes to the embedding cache file what it lacks: the
// entries stored since the last save, appended (see cacheFile).
func (s *Store) saveCache() error {
	if s.opts.CacheFile == "" {
		return nil
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if !s.cacheLoaded || (!s.cache.Dirty() && !s.file.rewrite && 2*s.file.garbage <= s.file.size) {
		return nil // never read (nothing embedded), or nothing to write
	}
	return s.file.save(s.cache)
}

// Close saves the embedding cache.
func (s *Store) Close() error { return s.saveCache() }
