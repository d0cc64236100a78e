// Package daemon is the composition root of `quire serve`: it builds every
// part from configuration (sources of truth, the store, the embedder, the
// git endpoint and the local API), wires the parts below together, runs
// their loops under one errgroup, and owns shutdown. Daemon itself does
// only that; each job is a part of its own:
//
//   - sourceSet: the sources served (hosted repositories and the git host
//     holding them, a followed upstream, a --dir working tree) and the
//     lookup of an agent in the current deployments.
//   - deployer: a source's commits → deployments. A new commit (an
//     accepted push, an upstream fetch, a saved file in a --dir working
//     tree, a write) becomes a deployment — the commit's gitsync.Snapshot,
//     a prompt.Workspace and every agent's skills.Set, built before
//     anything changes — which is swapped in with an atomic pointer, so a
//     request sees the old revision or the new one, never a mix. The
//     deployer also writes a push's deploy report and rebuilds
//     deployments when a shared skill tier changes.
//   - indexer: a coalescing runner (one pending deployment per source, a
//     size-one wake-up channel) that brings the memory store to the
//     deployed commit and retries with backoff while the store is away.
//   - writer: API writes → commits on live (behavior.md §7). A write is
//     checked (path, allow list, limits, If-Match) and validated as a push
//     would be, then committed with the agent as author and the user in a
//     Quire-User trailer: grouped with concurrent writes on a hosted
//     repository's live, pushed with compare-and-swap to a followed
//     upstream's live, or written into a --dir working tree; the deployer
//     deploys the result at once. Persona files go to proposals/<agent>/<n>
//     branches instead. The writer also prunes daily logs past their
//     retention, and merges a followed upstream's main into its live
//     after a fetch. The first write for a new user commits the user's
//     seed files with it.
//   - prompter: prompt requests → prompts, assembled from the deployed
//     revision and kept in the deployment's promptCache by agent, day
//     and request, so that a repeated request costs a lookup. The local
//     API gets the answers encoded as it sends them, MCP typed; neither
//     sees the cache.
//   - reader: the API's other reads (status, agents, memory search,
//     flush plans, files, skills, events, metrics), answered from the
//     current deployments and the store. A read never writes: a new user
//     reads their seed files virtually (seedFS), the same bytes the first
//     write commits. backend joins the reader, the prompter and the
//     writer into the api.Backend that the local API and MCP serve.
//   - upstream: follows a --upstream (fetches on --poll, a trigger or a
//     webhook) and keeps its health for status.
//   - liveNotes: daemons sharing a PostgreSQL store announce new live
//     commits to each other, so a follower fetches a write made elsewhere
//     at once; webhook: a signed push webhook makes a follower fetch.
//
// Each part owns what it keeps of a source (see source): the deployer
// the deployed revision, the indexer what the store holds, the writer
// the writes under way, upstream the upstream's health. The others read
// it through the owner's methods.
//
// Errors the API answers are *api.Error values with an api.Code; daemon/api
// decides the HTTP status of each code in one place (api.StatusOf). Every
// step is announced on the event stream.
package daemon
