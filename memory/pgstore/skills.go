package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/quirehq/quire/memory"
)

// ManagedSkill is one managed skill (skills tier 4) as an agent sees it.
// The daemon turns it into a skills source and access record; this package
// does not parse SKILL.md.
type ManagedSkill struct {
	Slug string
	// Version is the version the asking agent sees: its pinned one, else
	// the latest.
	Version int
	// Content is that version's SKILL.md; Description its front-matter
	// description, which with the slug is what gets embedded.
	Content, Description string
	// Visibility is "public" (default), "private" or "internal".
	Visibility string
	Owner      string
	// AgentGrants and UserGrants are the explicit grants of an internal skill.
	AgentGrants []SkillAgentGrant
	UserGrants  []string
	// Vector is the embedding of the slug and description, nil until
	// embedded (Backfill).
	Vector []float32
}

// SkillAgentGrant lets Agent use an internal skill; a Version other than 0
// pins it.
type SkillAgentGrant struct {
	Agent   string
	Version int
}

// PutSkill stores a skill: a new version when its content or description
// changed, and its visibility and owner in any case. It returns the
// skill's latest version. The new version is embedded at once when the
// embedder answers, otherwise by Backfill.
func (s *Store) PutSkill(ctx context.Context, sk ManagedSkill) (int, error) {
	if sk.Slug == "" {
		return 0, errors.New("put skill: empty slug")
	}
	if sk.Visibility == "" {
		sk.Visibility = "public"
	}
	hash := memory.Hash([]byte(sk.Description + "\x00" + sk.Content))
	var vector any
	if memory.Enabled(s.emb) {
		vs, err := s.emb.Embed(ctx, []string{skillText(sk.Slug, sk.Description)})
		if err == nil && (len(vs) != 1 || len(vs[0]) != s.emb.Dimensions()) {
			err = fmt.Errorf("%w: embedder %s returned an unusable vector", memory.ErrDimensions, s.emb.Model())
		}
		if err == nil && vs[0] != nil {
			vector = pgvector.NewVector(vs[0])
		} else if err != nil {
			s.log.Warn("skill embedding failed; back-fill later", "skill", sk.Slug, "err", err)
		}
	}
	var version int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var latest int
		var latestHash string
		err := tx.QueryRow(ctx, `SELECT s.latest_version, v.hash FROM skills s
			JOIN skill_versions v ON v.slug = s.slug AND v.version = s.latest_version
			WHERE s.slug = $1 FOR UPDATE OF s`, sk.Slug).Scan(&latest, &latestHash)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		version = latest
		if err == nil && latestHash == hash {
			_, err := tx.Exec(ctx, "UPDATE skills SET visibility = $2, owner = $3, updated_at = now() WHERE slug = $1", sk.Slug, sk.Visibility, sk.Owner)
			return err
		}
		version = latest + 1
		if _, err := tx.Exec(ctx, `INSERT INTO skills (slug, visibility, owner, latest_version) VALUES ($1, $2, $3, $4)
			ON CONFLICT (slug) DO UPDATE SET visibility = excluded.visibility, owner = excluded.owner,
			latest_version = excluded.latest_version, updated_at = now()`, sk.Slug, sk.Visibility, sk.Owner, version); err != nil {
			return err
		}
		cols := "slug, version, content, description, hash"
		vals := "$1, $2, $3, $4, $5"
		args := []any{sk.Slug, version, sk.Content, sk.Description, hash}
		if memory.Enabled(s.emb) {
			cols, vals, args = cols+", embedding", vals+", $6", append(args, vector)
		}
		_, err = tx.Exec(ctx, "INSERT INTO skill_versions ("+cols+") VALUES ("+vals+")", args...)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("put skill %s: %w", sk.Slug, err)
	}
	return version, nil
}

func skillText(slug, description string) string { return slug + ": " + description }

// DeleteSkill removes a skill with its versions and grants.
func (s *Store) DeleteSkill(ctx context.Context, slug string) error {
	if _, err := s.pool.Exec(ctx, "DELETE FROM skills WHERE slug = $1", slug); err != nil {
		return fmt.Errorf("delete skill %s: %w", slug, err)
	}
	return nil
}

// GrantSkillToAgent lets agent use the skill, pinned to version (0: the latest).
func (s *Store) GrantSkillToAgent(ctx context.Context, slug, agent string, version int) error {
	var pinned any
	if version > 0 {
		pinned = version
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO skill_agent_grants (slug, agent, pinned_version) VALUES ($1, $2, $3)
		ON CONFLICT (slug, agent) DO UPDATE SET pinned_version = excluded.pinned_version`, slug, agent, pinned)
	if err != nil {
		return fmt.Errorf("grant skill %s to agent %s: %w", slug, agent, err)
	}
	return nil
}

// GrantSkillToUser lets user use the skill.
func (s *Store) GrantSkillToUser(ctx context.Context, slug, user string) error {
	if _, err := s.pool.Exec(ctx, "INSERT INTO skill_user_grants (slug, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", slug, user); err != nil {
		return fmt.Errorf("grant skill %s to user %s: %w", slug, user, err)
	}
	return nil
}

// RevokeSkill removes the grants of agent and of user (either may be "").
func (s *Store) RevokeSkill(ctx context.Context, slug, agent, user string) error {
	batch := &pgx.Batch{}
	batch.Queue("DELETE FROM skill_agent_grants WHERE slug = $1 AND agent = $2", slug, agent)
	batch.Queue("DELETE FROM skill_user_grants WHERE slug = $1 AND user_id = $2", slug, user)
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("revoke skill %s: %w", slug, err)
	}
	return nil
}

// ManagedSkills returns every managed skill in the version agent sees,
// sorted by slug, with its access record; the caller applies visibility
// and grants for the user it serves.
func (s *Store) ManagedSkills(ctx context.Context, agent string) ([]ManagedSkill, error) {
	vec := "NULL::vector"
	if memory.Enabled(s.emb) {
		vec = "v.embedding"
	}
	rows, err := s.pool.Query(ctx, `SELECT s.slug, v.version, v.content, v.description, s.visibility, s.owner, `+vec+`,
			COALESCE((SELECT array_agg(g.agent ORDER BY g.agent) FROM skill_agent_grants g WHERE g.slug = s.slug), '{}'),
			COALESCE((SELECT array_agg(COALESCE(g.pinned_version, 0) ORDER BY g.agent) FROM skill_agent_grants g WHERE g.slug = s.slug), '{}'),
			COALESCE((SELECT array_agg(u.user_id ORDER BY u.user_id) FROM skill_user_grants u WHERE u.slug = s.slug), '{}')
		FROM skills s
		JOIN skill_versions v ON v.slug = s.slug AND v.version = COALESCE(
			(SELECT g.pinned_version FROM skill_agent_grants g WHERE g.slug = s.slug AND g.agent = $1), s.latest_version)
		ORDER BY s.slug`, agent)
	if err != nil {
		return nil, fmt.Errorf("managed skills: %w", err)
	}
	defer rows.Close()
	out := []ManagedSkill{}
	for rows.Next() {
		var sk ManagedSkill
		var v *pgvector.Vector
		var agents []string
		var versions []int32
		if err := rows.Scan(&sk.Slug, &sk.Version, &sk.Content, &sk.Description, &sk.Visibility, &sk.Owner, &v, &agents, &versions, &sk.UserGrants); err != nil {
			return nil, fmt.Errorf("managed skills: %w", err)
		}
		if v != nil {
			sk.Vector = v.Slice()
		}
		for i, a := range agents {
			sk.AgentGrants = append(sk.AgentGrants, SkillAgentGrant{Agent: a, Version: int(versions[i])})
		}
		out = append(out, sk)
	}
	return out, rows.Err()
}

// backfillSkills embeds skill versions that have no vector yet.
func (s *Store) backfillSkills(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, "SELECT slug, version, description FROM skill_versions WHERE embedding IS NULL ORDER BY slug, version")
	if err != nil {
		return 0, fmt.Errorf("backfill skills: %w", err)
	}
	type key struct {
		slug    string
		version int
	}
	var keys []key
	var texts, hashes []string
	for rows.Next() {
		var k key
		var desc string
		if err := rows.Scan(&k.slug, &k.version, &desc); err != nil {
			return 0, fmt.Errorf("backfill skills: %w", err)
		}
		keys = append(keys, k)
		texts = append(texts, skillText(k.slug, desc))
		hashes = append(hashes, "skill:"+memory.Hash([]byte(skillText(k.slug, desc))))
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("backfill skills: %w", err)
	}
	if len(keys) == 0 {
		return 0, nil
	}
	var cache memory.Cache
	vectors, err := memory.EmbedCached(ctx, s.emb, &cache, texts, hashes)
	if err != nil {
		return 0, fmt.Errorf("backfill skills: %w", err)
	}
	batch := &pgx.Batch{}
	for i, k := range keys {
		batch.Queue("UPDATE skill_versions SET embedding = $3 WHERE slug = $1 AND version = $2 AND embedding IS NULL", k.slug, k.version, pgvector.NewVector(vectors[i]))
	}
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return 0, fmt.Errorf("backfill skills: %w", err)
	}
	return len(keys), nil
}
