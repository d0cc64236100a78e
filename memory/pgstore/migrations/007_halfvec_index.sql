-- The vector index is now an HNSW index of the embeddings cast to half
-- precision (pgstore's hnswIndex: half the size, built faster), whose
-- candidates a search ranks by the stored vectors' exact cosine. The
-- index over the full vectors is dropped here; the store builds the new
-- one in the background when it opens (an exact scan serves until then).
-- The stored vectors keep their full precision.
DROP INDEX IF EXISTS chunks_embedding_hnsw;
