// Package daemon is the composition root of `quire serve`: it builds every
// part from configuration (sources of truth, the store, the embedder, the
// git endpoint and the local API), deploys new commits atomically, keeps
// the store's index in step with git, commits chat clients' writes, and
// owns shutdown.
//
// The pipeline: a new commit (an accepted push, an upstream fetch, a saved
// file in a --dir working tree) becomes a deployment — the commit's
// gitsync.Snapshot, a prompt.Workspace and every agent's skills.Set, built
// before anything changes — which is swapped in with an atomic pointer, so
// a request sees the old revision or the new one, never a mix. The
// deployment is then queued for the indexer, a coalescing runner (one
// pending deployment per source, a size-one wake-up channel) that brings
// the memory store to the deployed commit and retries with backoff while
// the store is away. Every step is announced on the event stream.
//
// Writes from chat clients (behavior.md §7) are commits through gitsync
// with the agent as author and the user in a Quire-User trailer; they are
// deployed at once and re-indexed like any other commit. Persona files go
// to proposals/<agent>/<n> branches instead.
package daemon
