package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quirehq/quire/memory"
)

//go:embed migrations/*.sql
var migrations embed.FS

// prepareSchema creates the vector extension when missing and migrates
// the schema, on a connection of its own: the pool's connections register
// the vector types as they connect, so the extension must exist first.
func prepareSchema(ctx context.Context, cfg *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public"); err != nil {
		return fmt.Errorf("create extension vector (install pgvector, or have a superuser run CREATE EXTENSION vector): %w", err)
	}
	return migrate(ctx, conn, schema)
}

// migrate applies the embedded migrations not yet recorded in
// schema_migrations, all in one transaction under an advisory lock.
//
// Version 2 (002_managed_skills.sql) is retired: it created the managed
// skill tables (skills, skill_versions, skill_agent_grants,
// skill_user_grants), which nothing reads any more. A database that
// applied it keeps them untouched, with their rows and any embedding
// column: dropping them would drop user data. Do not reuse the number.
func migrate(ctx context.Context, conn *pgx.Conn, schema string) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('quire-migrate:' || $1))", schema); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+ident+
		"; CREATE TABLE IF NOT EXISTS "+ident+".schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return fmt.Errorf("migrate: create schema %s: %w", schema, err)
	}
	applied, err := appliedVersions(ctx, tx, ident)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := checkNotNewer(schema, names, applied); err != nil {
		return err
	}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("migrate: migration %s has no version number", base)
		}
		if applied[version] {
			continue
		}
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+ident+", public"); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", base, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+ident+".schema_migrations (version, name) VALUES ($1, $2)", version, base); err != nil {
			return fmt.Errorf("migrate: record %s: %w", base, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// checkNotNewer refuses a schema that a newer quire migrated past the
// last of names: this one would write rows without what the newer one
// keeps beside them (chunk_terms since version 6), and its searches
// would miss them.
func checkNotNewer(schema string, names []string, applied map[int]bool) error {
	known := 0
	for _, name := range names {
		num, _, _ := strings.Cut(strings.TrimPrefix(name, "migrations/"), "_")
		if v, err := strconv.Atoi(num); err == nil {
			known = max(known, v)
		}
	}
	newest := 0
	for v := range applied {
		newest = max(newest, v)
	}
	if newest > known {
		return fmt.Errorf("migrate: schema %s is at version %d, written by a newer quire; this one knows versions up to %d: upgrade it (the daemons sharing a database run one version)", schema, newest, known)
	}
	return nil
}

// appliedVersions returns the versions schema_migrations records.
func appliedVersions(ctx context.Context, tx pgx.Tx, ident string) (map[int]bool, error) {
	rows, err := tx.Query(ctx, "SELECT version FROM "+ident+".schema_migrations")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// matchEmbedder makes chunks.embedding a vector of the embedder's
// dimension, dropping vectors of another model and the vector index with
// them (the column's indexes go with it): requestVectorIndex builds it
// again once there are vectors to index.
func (s *Store) matchEmbedder(ctx context.Context) error {
	model, dims := s.emb.Model(), s.emb.Dimensions()
	if !memory.Enabled(s.emb) {
		model, dims = "none", 0
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('quire-embedder:' || $1))", s.schema); err != nil {
			return fmt.Errorf("lock embedder config: %w", err)
		}
		var oldModel string
		var oldDims int
		err := tx.QueryRow(ctx, "SELECT model, dimensions FROM embedder_config").Scan(&oldModel, &oldDims)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read embedder config: %w", err)
		}
		if err == nil && oldModel == model && oldDims == dims {
			return nil
		}
		if err == nil {
			s.log.Info("embedder changed; dropping vectors to re-embed", "from", oldModel, "to", model, "dimensions", dims)
		}
		stmts := []string{"ALTER TABLE chunks DROP COLUMN IF EXISTS embedding"}
		if dims > 0 {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE chunks ADD COLUMN embedding vector(%d)", dims))
		}
		stmts = append(stmts, "DELETE FROM embedder_config")
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("configure embedder %s (%d dimensions): %s: %w", model, dims, q, err)
			}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO embedder_config (model, dimensions) VALUES ($1, $2)", model, dims); err != nil {
			return fmt.Errorf("record embedder config: %w", err)
		}
		return nil
	})
}
