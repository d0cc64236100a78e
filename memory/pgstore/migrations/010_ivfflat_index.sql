-- The vector index becomes an IVFFlat index of the embeddings cast to
-- half precision (pgstore's ivfIndex), with lists chosen from the table's
-- size when it is built: at a million chunks it builds in 3 minutes where
-- the HNSW index took 10 on 2 shared cores, at 70% of its size (issue 29).
-- The HNSW index is dropped here; the store builds the new one in the
-- background when it opens, once the table holds enough vectors for an
-- index to pay (an exact scan serves until then).
DROP INDEX IF EXISTS chunks_embedding_hnsw;
