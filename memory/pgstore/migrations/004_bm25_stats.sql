-- Full-text ranking is the embedded store's BM25, computed from term
-- statistics the store maintains in the indexing transaction (never from
-- ANALYZE or pg_stats): per agent its number of chunks and of their
-- tokens, per agent and term the number of chunks holding the term.
-- chunks.tokens is a chunk's length in tokens. The tokens are now
-- stemmed and a daily log's chunks index its date, so every agent is
-- re-indexed once (stored vectors are reused); the statistics start from
-- the chunks as they are, so that re-indexing keeps them exact.
ALTER TABLE chunks ADD COLUMN tokens int NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN chunk_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN token_count bigint NOT NULL DEFAULT 0;
CREATE TABLE term_stats (
    agent text NOT NULL,
    term  text NOT NULL,
    df    int NOT NULL,
    PRIMARY KEY (agent, term)
);
UPDATE chunks SET tokens = (SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) FROM unnest(tsv));
INSERT INTO term_stats (agent, term, df)
    SELECT agent, lexeme, count(*) FROM chunks, unnest(tsv) GROUP BY agent, lexeme;
INSERT INTO agents (agent) SELECT DISTINCT agent FROM chunks ON CONFLICT DO NOTHING;
UPDATE agents AS a SET chunk_count = s.n, token_count = s.t
    FROM (SELECT agent, count(*) AS n, sum(tokens) AS t FROM chunks GROUP BY agent) AS s
    WHERE a.agent = s.agent;
UPDATE documents SET hash = '';
UPDATE agents SET indexed_commit = '';
