package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
	"github.com/quirehq/quire/memory/bm25"
	"github.com/quirehq/quire/memory/memstore"
	"github.com/quirehq/quire/memory/storetest"
)

// databaseURL returns QUIRE_TEST_DATABASE_URL or skips the test loudly.
// `make test` always sets it (.ci/testdb.sh).
func databaseURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("QUIRE_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("\n" + strings.Repeat("!", 72) + "\n!! QUIRE_TEST_DATABASE_URL is not set: the PostgreSQL store is NOT tested.\n!! Run `make test` (it installs PostgreSQL + pgvector) or set the variable.\n" + strings.Repeat("!", 72))
	}
	return url
}

// testSchema returns a fresh schema name, dropped when t ends.
func testSchema(t testing.TB) string {
	t.Helper()
	url := databaseURL(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "quire_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

func openStore(t testing.TB, schema string, e memory.Embedder) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{URL: databaseURL(t), Schema: schema, Embedder: e, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	databaseURL(t)
	storetest.Run(t, func(t *testing.T, e memory.Embedder) memory.Store {
		return openStore(t, testSchema(t), e)
	})
}

// TestRankingParity: the embedded store and this one rank alike.
func TestRankingParity(t *testing.T) {
	databaseURL(t)
	storetest.Parity(t, func(t *testing.T, e memory.Embedder) memory.Store {
		s, err := memstore.New(memstore.Options{Embedder: e})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(t *testing.T, e memory.Embedder) memory.Store {
		return openStore(t, testSchema(t), e)
	})
}

func TestMigrationsIdempotent(t *testing.T) {
	schema := testSchema(t)
	openStore(t, schema, memory.None{})
	s := openStore(t, schema, memory.None{})
	files, _ := fs.Glob(migrations, "migrations/*.sql")
	var n int
	if err := s.pool.QueryRow(context.Background(), "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil || n != len(files) || n < 2 {
		t.Errorf("schema_migrations rows = %d, %v; want one per file (%d)", n, err, len(files))
	}
}

// Changing the embedder (model or dimension) drops the old vectors, sizes
// the column for the new dimension, and Backfill re-embeds every chunk.
func TestEmbedderChangeReembeds(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.Builtin{Dims: 64})
	docs := []memory.Document{memory.NewDocument("MEMORY.md", "", "alpha beta\n\n"+strings.Repeat("gamma ", 120)), memory.NewDocument("memory/x.md", "", "delta")}
	if _, err := s.Index(ctx, "a", "c1", docs); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openStore(t, schema, memory.Builtin{Dims: 32})
	var typ string
	if err := s2.pool.QueryRow(ctx, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'").Scan(&typ); err != nil || typ != "vector(32)" {
		t.Errorf("embedding column = %q, %v; want vector(32)", typ, err)
	}
	n, err := s2.Backfill(ctx)
	if err != nil || n != 2 {
		t.Errorf("backfill after embedder change = %d, %v; want 2", n, err)
	}
	hits, err := s2.Search(ctx, "a", memory.Query{Text: "delta"})
	if err != nil || len(hits) == 0 || hits[0].Path != "memory/x.md" {
		t.Errorf("search after re-embed: %+v %v", hits, err)
	}
	// Same embedder again: nothing dropped.
	s2.Close()
	s3 := openStore(t, schema, memory.Builtin{Dims: 32})
	if n, err := s3.Backfill(ctx); err != nil || n != 0 {
		t.Errorf("backfill with unchanged embedder = %d, %v; want 0", n, err)
	}
}

// A database that applied migration 2 before it was retired keeps its
// managed-skill tables, rows and vectors: the migrations and an embedder
// change leave them alone.
func TestRetiredSkillTablesKept(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	conn, err := pgx.Connect(ctx, databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		"CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public",
		"CREATE SCHEMA " + ident,
		"CREATE TABLE " + ident + ".schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		"INSERT INTO " + ident + ".schema_migrations (version, name) VALUES (2, '002_managed_skills.sql')",
		"CREATE TABLE " + ident + ".skills (slug text PRIMARY KEY, latest_version int NOT NULL)",
		"CREATE TABLE " + ident + ".skill_versions (slug text NOT NULL REFERENCES " + ident + ".skills (slug) ON DELETE CASCADE, version int NOT NULL, content text NOT NULL, embedding public.vector(3), PRIMARY KEY (slug, version))",
		"INSERT INTO " + ident + ".skills VALUES ('pdf', 1)",
		"INSERT INTO " + ident + ".skill_versions VALUES ('pdf', 1, 'v1 body', '[1,2,3]')",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	conn.Close(ctx)
	s := openStore(t, schema, memory.Builtin{Dims: 64})
	docs := []memory.Document{memory.NewDocument("MEMORY.md", "", "alpha beta")}
	if _, err := s.Index(ctx, "a", "c1", docs); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openStore(t, schema, memory.Builtin{Dims: 32})
	if n, err := s2.Backfill(ctx); err != nil || n != 1 {
		t.Errorf("backfill after embedder change = %d, %v; want the one chunk", n, err)
	}
	var content, vector string
	if err := s2.pool.QueryRow(ctx, "SELECT content, embedding::text FROM skill_versions WHERE slug = 'pdf' AND version = 1").Scan(&content, &vector); err != nil || content != "v1 body" || vector != "[1,2,3]" {
		t.Errorf("retired skill row = %q, %q, %v; want it kept with its vector", content, vector, err)
	}
}

// Two stores sharing a database: the second Index of the same commit finds
// it indexed and does nothing.
func TestSameCommitIndexedOnce(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	a := openStore(t, schema, memory.Builtin{})
	b := openStore(t, schema, memory.Builtin{})
	docs := []memory.Document{memory.NewDocument("MEMORY.md", "", "hello world")}
	if st, err := a.Index(ctx, "x", "c1", docs); err != nil || st.Changed != 1 {
		t.Fatal(st, err)
	}
	st, err := b.Index(ctx, "x", "c1", docs)
	if err != nil || st.Changed != 0 || st.Chunks != 0 {
		t.Errorf("second index of c1: %+v, %v; want nothing done", st, err)
	}
}

// A bulk load drops the secondary indexes and builds them again: the
// full-text ones at the end of the same transaction, the vector index
// concurrently after the commit. Every index is back, with its definition.
func TestBulkLoadRebuildsIndexes(t *testing.T) {
	for _, e := range []memory.Embedder{memory.Builtin{}, memory.None{}} {
		t.Run(e.Model(), func(t *testing.T) {
			ctx := context.Background()
			defer func(n int) { bulkChunks = n }(bulkChunks)
			bulkChunks = 2
			approximateVectors(t) // a vector index however small the table
			s := openStore(t, testSchema(t), e)
			indexes := func() map[string]string {
				return namedDefinitions(t, s, "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('chunks', 'chunk_terms') AND schemaname = current_schema()")
			}
			docs := []memory.Document{memory.NewDocument("MEMORY.md", "", "one\n\n"+strings.Repeat("filler ", 100)+"\n\n"+strings.Repeat("second ", 100)), memory.NewDocument("memory/x.md", "", "kangaroo")}
			// The first load leaves the indexes to compare with, the
			// vector index built after it.
			if st, err := s.Index(ctx, "b", "c1", docs); err != nil || st.Chunks < 2 {
				t.Fatal(st, err)
			}
			s.WaitIndexBuilds()
			before := indexes()
			_, vector := before["chunks_embedding_ivf1"]
			if len(before) < 6 || vector != memory.Enabled(e) {
				t.Fatalf("indexes after a first load: %v", before)
			}
			st, err := s.Index(ctx, "a", "c1", docs)
			if err != nil || st.Chunks < 2 {
				t.Fatal(st, err)
			}
			// Searchable at once (the vector index may still be building).
			hits, err := s.Search(ctx, "a", memory.Query{Text: "kangaroos kangaroo"})
			if err != nil || len(hits) == 0 || hits[0].Path != "memory/x.md" {
				t.Errorf("search after bulk load: %+v, %v", hits, err)
			}
			s.WaitIndexBuilds()
			if after := indexes(); !maps.Equal(before, after) {
				t.Errorf("indexes after a bulk load:\n%v\nwant\n%v", after, before)
			}
			var invalid int
			if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM pg_index WHERE indrelid IN ('chunks'::regclass, 'chunk_terms'::regclass) AND NOT indisvalid").Scan(&invalid); err != nil || invalid != 0 {
				t.Errorf("%d invalid indexes, %v", invalid, err)
			}
		})
	}
}

// checkTermCounts checks agent a's statistics against its chunks: the
// agent's chunk and token counts, and each term's document frequency.
func checkTermCounts(t *testing.T, s *Store, when string) {
	t.Helper()
	ctx := context.Background()
	var n, tokens int64
	if err := s.pool.QueryRow(ctx, "SELECT chunk_count, token_count FROM agents WHERE agent = 'a'").Scan(&n, &tokens); err != nil {
		t.Fatal(err)
	}
	var wantN, wantTokens int64
	if err := s.pool.QueryRow(ctx, "SELECT count(*), coalesce(sum(tokens), 0) FROM chunks WHERE agent = 'a'").Scan(&wantN, &wantTokens); err != nil {
		t.Fatal(err)
	}
	if n != wantN || tokens != wantTokens {
		t.Errorf("%s: agent counts %d chunks, %d tokens; the chunks are %d, %d", when, n, tokens, wantN, wantTokens)
	}
	var wrong int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT * FROM term_stats WHERE agent = 'a') s FULL JOIN
		(SELECT u.id, count(*) AS df FROM chunks c JOIN chunk_terms t ON t.chunk_id = c.id, unnest(`+chunkTermIDs+`) AS u(id) WHERE c.agent = 'a' GROUP BY u.id) c
		ON s.id = c.id WHERE s.df IS DISTINCT FROM c.df`).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%s: %d terms with a document frequency other than the chunks'", when, wrong)
	}
}

// TestTermStatistics: the agent's term statistics follow its chunks
// through index, change and removal, within the indexing transaction
// (no ANALYZE), and a search ranks by them from the first query.
func TestTermStatistics(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testSchema(t), memory.None{})
	var indexed []memory.Document
	check := func(when string) {
		t.Helper()
		checkTermCounts(t, s, when)
		// Each chunk's chunk_terms row: its length, and its terms and
		// scope, each with a count.
		rows, err := s.pool.Query(ctx, `SELECT c.user_id, c.path, c.start_line, c.tokens, t.tokens, length(t.tf) = 6 * cardinality(t.scoped),
			(SELECT array_agg(s.term ORDER BY s.term) FROM unnest(`+chunkTermIDs+`) AS u(id) JOIN term_stats s ON s.id = u.id)
			FROM chunks c LEFT JOIN chunk_terms t ON t.chunk_id = c.id WHERE c.agent = 'a'`)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]string{}
		for rows.Next() {
			var user, path string
			var line, tokens int
			var rowTokens *int
			var tfOK *bool
			var terms []string
			if err := rows.Scan(&user, &path, &line, &tokens, &rowTokens, &tfOK, &terms); err != nil {
				t.Fatal(err)
			}
			if rowTokens == nil || *rowTokens != tokens || !*tfOK {
				t.Errorf("%s: chunk %s:%d has no chunk_terms row or a wrong one", when, path, line)
			}
			stored[fmt.Sprintf("%s %s:%d", user, path, line)] = strings.Join(terms, ",")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		var a memory.Analyzer
		for _, d := range indexed {
			for _, c := range d.Chunks() {
				terms := []string{scopeTerm(c.User)}
				for _, tok := range a.Terms(memory.IndexText(c)) {
					if !slices.Contains(terms, tok) {
						terms = append(terms, tok)
					}
				}
				slices.Sort(terms)
				want[fmt.Sprintf("%s %s:%d", c.User, c.Path, c.StartLine)] = strings.Join(terms, ",")
			}
		}
		if !maps.Equal(stored, want) {
			t.Errorf("%s: the chunks' terms are\n%v\nwant\n%v", when, stored, want)
		}
	}
	var docs []memory.Document
	for i := 0; i < 30; i++ {
		text := fmt.Sprintf("a note about everyday things, number%d", i)
		if i%10 == 0 {
			text += " with the printers printing"
		}
		docs = append(docs, memory.NewDocument(fmt.Sprintf("memory/%03d.md", i), "", text))
	}
	if _, err := s.Index(ctx, "a", "c1", docs); err != nil {
		t.Fatal(err)
	}
	indexed = docs
	check("after the first index")
	hits, err := s.Search(ctx, "a", memory.Query{Text: "printer number10"})
	if err != nil || len(hits) != 3 || hits[0].Path != "memory/010.md" {
		t.Errorf("hits = %+v, %v; want memory/010.md first of the 3 printer notes", hits, err)
	}
	docs[10] = memory.NewDocument("memory/010.md", "", "rewritten")
	docs = docs[:20]
	if _, err := s.Index(ctx, "a", "c2", docs); err != nil {
		t.Fatal(err)
	}
	indexed = docs
	check("after a change and removals")
	if _, err := s.pool.Exec(ctx, "ANALYZE chunks"); err != nil {
		t.Fatal(err)
	}
	again, err := s.Search(ctx, "a", memory.Query{Text: "printer number10"})
	if err != nil || len(again) != 1 || again[0].Path != "memory/000.md" {
		t.Errorf("hits after the change = %+v, %v; want memory/000.md only", again, err)
	}
	if _, err := s.Index(ctx, "a", "c3", nil); err != nil {
		t.Fatal(err)
	}
	indexed = nil
	check("after removing everything")
	var terms int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM term_stats WHERE agent = 'a'").Scan(&terms); err != nil || terms != 0 {
		t.Errorf("%d terms left for an agent without chunks, %v", terms, err)
	}
}

type countingEmbedder struct {
	storetest.Flaky
	calls int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls++
	return c.Flaky.Embed(ctx, texts)
}

// The embedder is called once per Index, before the transaction, and not
// again inside it — also when it fails.
func TestEmbedderCalledOutsideTransaction(t *testing.T) {
	ctx := context.Background()
	e := &countingEmbedder{Flaky: storetest.Flaky{Embedder: memory.Builtin{}}}
	s := openStore(t, testSchema(t), e)
	if _, err := s.Index(ctx, "a", "c1", []memory.Document{memory.NewDocument("MEMORY.md", "", "one"), memory.NewDocument("memory/x.md", "", "two")}); err != nil {
		t.Fatal(err)
	}
	if e.calls != 1 {
		t.Errorf("embedder called %d times, want 1", e.calls)
	}
	e.Down.Store(true)
	e.calls = 0
	st, err := s.Index(ctx, "a", "c2", []memory.Document{memory.NewDocument("MEMORY.md", "", "one changed"), memory.NewDocument("memory/x.md", "", "two")})
	if err != nil || st.Pending != 1 || st.EmbedError == nil {
		t.Errorf("index during outage: %+v, %v", st, err)
	}
	if e.calls != 1 {
		t.Errorf("embedder called %d times during an outage, want 1", e.calls)
	}
}

// TestTextVectorInPostgres: the terms the store writes are the tokens
// queries are made of, PostgreSQL accepts every chunk's terms (repeats,
// other scripts, a token too long to index), each is found and counted
// exactly.
func TestTextVectorInPostgres(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testSchema(t), memory.None{})
	long := strings.Repeat("x", 2100)
	texts := []string{
		"Ines prefers TEA; the printer on floor 2 is out of toner.",
		"Ünïcödé Straße — ЗДРАВСТВУЙ мир, 東京 2026-11-22 e-mail foo_bar",
		strings.Repeat("ab ", 300) + "finally",
		"prelude " + long + " coda",
	}
	var docs []memory.Document
	for i, text := range texts {
		docs = append(docs, memory.NewDocument(fmt.Sprintf("memory/%d.md", i), "", text))
	}
	if _, err := s.Index(ctx, "a", "c1", docs); err != nil {
		t.Fatal(err)
	}
	var terms memory.Analyzer
	for i, text := range texts {
		var lexemes int
		if err := s.pool.QueryRow(ctx, "SELECT cardinality(t.scoped) - 1 FROM chunks c JOIN chunk_terms t ON t.chunk_id = c.id WHERE c.path = $1", fmt.Sprintf("memory/%d.md", i)).Scan(&lexemes); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, tok := range terms.Terms(memory.IndexText(memory.Chunk{Path: fmt.Sprintf("memory/%d.md", i), Text: text})) {
			if len(tok) <= maxLexeme {
				want[tok] = true
			}
		}
		if lexemes != len(want) {
			t.Errorf("text %d: %d lexemes stored, want %d", i, lexemes, len(want))
		}
		for tok := range want {
			var path string
			err := s.pool.QueryRow(ctx, `SELECT c.path FROM chunks c JOIN chunk_terms t ON t.chunk_id = c.id JOIN term_stats s ON s.id = ANY(`+chunkTermIDs+`)
				WHERE s.agent = 'a' AND s.term = $1 ORDER BY c.path LIMIT 1`, tok).Scan(&path)
			if err != nil {
				t.Errorf("text %d: token %q not found: %v", i, tok, err)
			}
		}
	}
	if hits, err := s.Search(ctx, "a", memory.Query{Text: long + " prelude"}); err != nil || len(hits) != 1 {
		t.Errorf("search with a token too long to index: %+v, %v; want the chunk with \"prelude\"", hits, err)
	}
	var id int32
	var tf []byte
	if err := s.pool.QueryRow(ctx, "SELECT s.id, t.tf FROM term_stats s JOIN chunk_terms t ON s.id = ANY("+chunkTermIDs+") WHERE s.agent = 'a' AND s.term = 'ab'").Scan(&id, &tf); err != nil || termCount(tf, id) != 300 {
		t.Errorf("count of a token said 300 times: %d, %v; want 300", termCount(tf, id), err)
	}
}

// TestMigrationRetokenizes: a database whose tsv column was generated by
// to_tsvector (migration 001 before 003) re-indexes every document once
// after the upgrade, reusing the stored vectors, and then finds what only
// the store's tokens match.
func TestMigrationRetokenizes(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	e := &countingEmbedder{Flaky: storetest.Flaky{Embedder: memory.Builtin{}}}
	s := openStore(t, schema, e)
	docs := []memory.Document{memory.NewDocument("MEMORY.md", "", "Write to foo_bar@example.com about the e-mail.")}
	if _, err := s.Index(ctx, "a", "c1", docs); err != nil {
		t.Fatal(err)
	}
	// Back to the schema before 003: a generated column, 003 not applied
	// (nor 008, which drops the column again).
	for _, q := range []string{
		"ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED",
		"DELETE FROM schema_migrations WHERE version IN (3, 8)",
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()
	s = openStore(t, schema, e)
	if c, err := s.IndexedCommit(ctx, "a"); err != nil || c != "" {
		t.Fatalf("indexed commit after the upgrade: %q, %v; want none, so that the agent is indexed again", c, err)
	}
	e.calls = 0
	st, err := s.Index(ctx, "a", "c1", docs)
	if err != nil || st.Changed != 1 || st.Embedded != st.Chunks {
		t.Fatalf("re-index after the upgrade: %+v, %v; want the document changed, every chunk with its vector", st, err)
	}
	if e.calls != 0 {
		t.Errorf("the re-index called the embedder %d times; want the stored vectors reused", e.calls)
	}
	// to_tsvector('simple') keeps "foo_bar@example.com" as one email
	// token; the store's tokens are foo, bar, example, com.
	hits, err := s.Search(ctx, "a", memory.Query{Text: "example"})
	if err != nil || len(hits) != 1 {
		t.Errorf("search after the upgrade: %+v, %v", hits, err)
	}
}

// TestSchemaNewerRefused: a schema a newer quire migrated is refused with
// an error that names it and its version.
func TestSchemaNewerRefused(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.None{})
	if _, err := s.pool.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES (999, '999_future.sql')"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(ctx, Options{URL: databaseURL(t), Schema: schema, Embedder: memory.None{}, MaxConns: 4})
	if err == nil || !strings.Contains(err.Error(), "version 999, written by a newer quire") || !strings.Contains(err.Error(), schema) {
		t.Fatalf("Open on a newer schema: %v, want a refusal naming the schema and its version", err)
	}
}

// TestMigrationBackfillsChunkTerms: a database from before chunk_terms
// (migration 006) gets every chunk's row from its tsvector, with its
// scope, and searches rank as they did on rows the store wrote; the
// tsvector column is then dropped (008) and later writes, removals
// included, go on from chunk_terms.
func TestMigrationBackfillsChunkTerms(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.None{})
	corpus := storetest.NewCorpus(300, 3)
	if _, err := s.Index(ctx, "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	search := func() []memory.Hit { return searchQueries(t, s, corpus, 40) }
	want := search()
	// Back to the schema before 006 (and 008): chunks.tsv holds each
	// chunk's terms with a position per occurrence, up to 256.
	for _, q := range []string{
		"ALTER TABLE chunks ADD COLUMN tsv tsvector",
		`UPDATE chunks c SET tsv = coalesce((SELECT string_agg(quote_literal(s.term) || ':' ||
			(SELECT string_agg(g::text, ',') FROM generate_series(1, least((get_byte(t.tf, 6 * u.i::int - 2) << 8) + get_byte(t.tf, 6 * u.i::int - 1), 256)) AS g), ' ')
			FROM chunk_terms t, unnest(` + chunkTermIDs + `) WITH ORDINALITY AS u(id, i) JOIN term_stats s ON s.id = u.id
			WHERE t.chunk_id = c.id AND s.term NOT LIKE ' scope:%'), '')::tsvector`,
		"DROP TABLE chunk_terms",
		"DELETE FROM term_stats WHERE term LIKE ' scope:%'",
		"ALTER TABLE term_stats DROP COLUMN id",
		"DELETE FROM schema_migrations WHERE version IN (6, 8, 9)",
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()
	s = openStore(t, schema, memory.None{})
	if got := search(); !sameHits(got, want) {
		t.Errorf("searches after the upgrade differ from before it")
	}
	var tsv bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'chunks'::regclass AND attname = 'tsv' AND NOT attisdropped)").Scan(&tsv); err != nil || tsv {
		t.Errorf("chunks.tsv after the upgrade: %v, %v; want it dropped (008)", tsv, err)
	}
	docs := append(corpus.Docs[1:], memory.NewDocument("memory/new.md", corpus.Users[0], corpus.Queries[0]))
	if _, err := s.Index(ctx, "a", "c2", docs); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "a", memory.Query{Text: corpus.Queries[0], User: corpus.Users[0]})
	if err != nil || len(hits) == 0 || hits[0].Path != "memory/new.md" {
		t.Errorf("search after a write on the upgraded schema: %+v, %v", hits, err)
	}
}

// FuzzAnalyze: whatever the text, its terms are distinct, non-empty,
// of at most 2,047 bytes, each counted as often as the text holds it,
// every indexable token among them, and its length is its number of
// tokens.
func FuzzAnalyze(f *testing.F) {
	f.Add("Ines prefers TEA; the printer on floor 2 is out of toner.")
	f.Add(strings.Repeat("ab ", 400))
	f.Add("Ünïcödé \xff\xfe Straße 東京 " + strings.Repeat("y", 2100))
	f.Fuzz(func(t *testing.T, text string) {
		var terms memory.Analyzer
		ct := analyze(&terms, text)
		all := terms.Terms(text)
		count := map[string]int{}
		for _, tok := range all {
			if len(tok) <= maxLexeme {
				count[tok]++
			}
		}
		if len(ct.terms) != len(count) || len(ct.tf) != len(ct.terms) {
			t.Fatalf("%d terms, %d counts; want %d", len(ct.terms), len(ct.tf), len(count))
		}
		for i, w := range ct.terms {
			if w == "" || count[w] != ct.tf[i] {
				t.Fatalf("term %q counted %d, want %d", w, ct.tf[i], count[w])
			}
		}
		if ct.tokens != len(all) || len(bm25.Tokenize(text)) != ct.tokens {
			t.Fatalf("length %d; want the %d terms", ct.tokens, len(all))
		}
	})
}

// searchQueries runs the corpus's first n queries on agent "a", each as
// one of its users in turn, and returns their hits in order.
func searchQueries(t *testing.T, s *Store, corpus *storetest.Corpus, n int) []memory.Hit {
	t.Helper()
	var all []memory.Hit
	for i, q := range corpus.Queries[:n] {
		hits, err := s.Search(context.Background(), "a", memory.Query{Text: q, User: corpus.Users[i%len(corpus.Users)]})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, hits...)
	}
	return all
}

// sameHits reports whether a and b hold the same hits (document, line
// and score) in the same order.
func sameHits(a, b []memory.Hit) bool {
	return slices.EqualFunc(a, b, func(x, y memory.Hit) bool {
		return x.Path == y.Path && x.User == y.User && x.StartLine == y.StartLine && x.Score == y.Score
	})
}

// chunkTermIDs is, in SQL, the term ids of the chunk_terms row t (from
// its scoped keys), in order.
const chunkTermIDs = "ARRAY(SELECT " + termIDSQL + " FROM unnest(t.scoped) AS k ORDER BY k)"

// TestMigrationScopedTerms: a database from before migration 009, whose
// chunk_terms rows hold bare term ids, gets each row's terms keyed by its
// scope, as the store writes them, and searches rank as before.
func TestMigrationScopedTerms(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openStore(t, schema, memory.None{})
	corpus := storetest.NewCorpus(300, 9)
	if _, err := s.Index(ctx, "a", "c1", corpus.Docs); err != nil {
		t.Fatal(err)
	}
	search := func() []memory.Hit { return searchQueries(t, s, corpus, 40) }
	rowsSQL := "SELECT chunk_id::text || ' ' || tokens || ' ' || scoped::text || ' ' || encode(tf, 'hex') FROM chunk_terms ORDER BY chunk_id"
	keys := func() []string {
		rows, err := s.pool.Query(ctx, rowsSQL)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, wantKeys := search(), keys()
	// Back to the schema before 009.
	for _, q := range []string{
		"CREATE TABLE chunk_terms_old AS SELECT t.chunk_id, t.tokens, " + chunkTermIDs + " AS terms, t.tf FROM chunk_terms t",
		"DROP TABLE chunk_terms",
		"ALTER TABLE chunk_terms_old RENAME TO chunk_terms",
		"ALTER TABLE chunk_terms ADD PRIMARY KEY (chunk_id), ADD FOREIGN KEY (chunk_id) REFERENCES chunks (id) ON DELETE CASCADE",
		"CREATE INDEX chunk_terms_terms ON chunk_terms USING gin (terms) WITH (fastupdate = off)",
		"DELETE FROM schema_migrations WHERE version = 9",
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()
	s = openStore(t, schema, memory.None{})
	if got := keys(); !slices.Equal(got, wantKeys) {
		t.Errorf("chunk_terms after the upgrade differ from the rows the store wrote (%d rows, want %d)", len(got), len(wantKeys))
	}
	if got := search(); !sameHits(got, want) {
		t.Errorf("searches after the upgrade differ from before it")
	}
	// Removals go on from the upgraded rows, discounting their terms.
	if _, err := s.Index(ctx, "a", "c2", corpus.Docs[1:]); err != nil {
		t.Fatal(err)
	}
	checkTermCounts(t, s, "after a removal from upgraded rows")
}
