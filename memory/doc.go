// Package memory owns an agent's long-term memory: the memory documents of
// a workspace (MEMORY.md, memory/**/*.md, and the same per user), chunking,
// the full-text analysis both stores share (Analyzer: English stems, query
// stop words; IndexText: a daily log's date, its day term and the lead-in
// line indexed with each chunk; QueryTerms: a query's words and the day
// terms of a period it names, read by QueryPeriod against the query's
// reference time), embedders, hybrid ranking of full-text and vector
// candidates (Rank), the context returned around a hit (Neighbours), and
// the Store interface that the embedded index and the PostgreSQL store
// implement.
//
// The package is pure: no database driver and no os/exec. Embedders that
// call an HTTP endpoint are the one place it talks to the network.
package memory
