-- Managed skills (skills tier 4): every version is kept so that an agent
-- grant can pin one. The embedding column of skill_versions is added by the
-- store with the embedder's dimension, like chunks.embedding.
CREATE TABLE skills (
    slug           text PRIMARY KEY,
    visibility     text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private', 'internal')),
    owner          text NOT NULL DEFAULT '',
    latest_version int NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE skill_versions (
    slug        text NOT NULL REFERENCES skills (slug) ON DELETE CASCADE,
    version     int NOT NULL,
    content     text NOT NULL,
    description text NOT NULL DEFAULT '',
    hash        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (slug, version)
);

-- An agent may use an internal skill; pinned_version NULL follows the latest.
CREATE TABLE skill_agent_grants (
    slug           text NOT NULL REFERENCES skills (slug) ON DELETE CASCADE,
    agent          text NOT NULL,
    pinned_version int,
    PRIMARY KEY (slug, agent),
    FOREIGN KEY (slug, pinned_version) REFERENCES skill_versions (slug, version)
);

CREATE TABLE skill_user_grants (
    slug    text NOT NULL REFERENCES skills (slug) ON DELETE CASCADE,
    user_id text NOT NULL,
    PRIMARY KEY (slug, user_id)
);
