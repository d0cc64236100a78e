-- Agents and their indexed commit.
CREATE TABLE agents (
    agent          text PRIMARY KEY,
    indexed_commit text NOT NULL DEFAULT '',
    indexed_at     timestamptz
);

-- Memory documents, scoped by agent and user ('' = agent-level).
CREATE TABLE documents (
    id      bigserial PRIMARY KEY,
    agent   text NOT NULL,
    user_id text NOT NULL DEFAULT '',
    path    text NOT NULL,
    hash    text NOT NULL,
    UNIQUE (agent, user_id, path)
);

-- Chunks of documents. The embedding column is added by the store with
-- the configured embedder's dimension (see embedder_config).
CREATE TABLE chunks (
    id          bigserial PRIMARY KEY,
    document_id bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    agent       text NOT NULL,
    user_id     text NOT NULL,
    path        text NOT NULL,
    start_line  int NOT NULL,
    end_line    int NOT NULL,
    text        text NOT NULL,
    hash        text NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_scope ON chunks (agent, user_id);
CREATE INDEX chunks_document ON chunks (document_id);
CREATE INDEX chunks_hash ON chunks (hash);

-- The embedder whose vectors chunks.embedding holds.
CREATE TABLE embedder_config (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    model      text NOT NULL,
    dimensions int NOT NULL
);
