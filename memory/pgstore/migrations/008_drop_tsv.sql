-- chunks.tsv and its GIN index are no longer written: search reads
-- chunk_terms (006), and the statistics of removed chunks come from their
-- chunk_terms rows too. Dropping the column rewrites nothing: rows written
-- before keep its bytes until they are rewritten (VACUUM FULL reclaims
-- them at once, under an exclusive lock).
DROP INDEX IF EXISTS chunks_tsv;
ALTER TABLE chunks DROP COLUMN IF EXISTS tsv;
