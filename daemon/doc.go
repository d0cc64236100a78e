// Package daemon is the composition root of `quire serve`: it builds every
// part from configuration (sources of truth, the store, the embedder, the
// git endpoint and the local API), deploys new commits atomically, keeps
// the store's index in step with git, and owns shutdown.
package daemon
