-- chunks.tsv holds the full-text tokens of memory/bm25, written by the
-- store with each chunk (the tokens queries are made of, and those of the
-- embedded store), instead of to_tsvector('simple'), which was most of
-- the cost of a bulk load. Clearing the document hashes and indexed
-- commits re-indexes every agent once, with the new tokens; stored
-- vectors are reused.
ALTER TABLE chunks ALTER COLUMN tsv DROP EXPRESSION;
ALTER TABLE chunks ALTER COLUMN tsv SET DEFAULT ''::tsvector;
UPDATE documents SET hash = '';
UPDATE agents SET indexed_commit = '';
