// Package gitsync owns the git side of Quire: a commit's tree as an
// io/fs.FS (Snapshot), changed paths between commits, the daemon's own
// commits, hosted repositories served over smart HTTP with validation
// before any ref moves, following an upstream remote and watching a working
// tree.
//
// Reads and the daemon's commits go through go-git; the git CLI
// (MinGitVersion or later; CheckGit checks it) is a run-time dependency
// for what it does better: serving fetches (git upload-pack), indexing
// pushed packs (git index-pack), consolidating packs (git repack
// --geometric) and fetching from and pushing to an upstream.
//
// Nothing acknowledged is lost on a crash (kill -9, power loss):
//
//   - Every ref moves the way git moves it: "<ref>.lock" is created
//     exclusively (so a concurrent git is excluded too), written, synced
//     and renamed over the ref, and the directory is synced; the old value
//     is compared under the lock (loose or packed-refs). A crash leaves the
//     old or the new value, never an empty file; a damaged ref is a
//     *BrokenRefError naming it (Repository.Check), never an empty
//     repository, and a push can replace it.
//   - Objects are durable before a ref names them: a commit's few objects
//     are written as one small pack, pack and index synced, the pack
//     renamed into place before its index, the directory synced. No loose
//     objects are written. Host.Maintain rolls the small packs up
//     (RollUp: git pack-objects of the objects of the packs a geometric
//     repack would roll up, none of more than 32,768 objects, with the
//     paths found in those packs alone) after every
//     64 packs, and repacks whole (git repack --geometric=2) only in its
//     periodic pass; neither holds this package's locks while git runs.
//
// The parts:
//
//   - Open a repository (bare, or any directory of a work tree) and take
//     Snapshot(rev) of any revision: an fs.FS over the commit's tree,
//     read without checkout. Changes lists the paths that differ between
//     two commits (no rename detection). Packs are read through their
//     index files in place (mapped on unix), each read once when its pack
//     appears; reads list the pack directory again when another process
//     (git repack) changed the packs.
//   - Commit writes the daemon's commits: only the trees on the written
//     paths are rebuilt, the ref moves with compare-and-swap, writers to
//     one Repository are serialized, the agent is the author and the user
//     goes in a "Quire-User:" trailer. FileWrite.Match is If-Match on a
//     file's blob hash; a write through a file or over a directory is a
//     *PathConflictError.
//   - Host keeps bare repositories under a directory and is the smart-HTTP
//     endpoint (/<name>.git) for clone, fetch and push. Fetches are git
//     upload-pack (streamed, shallow clones, only objects the refs reach,
//     no locks held, answered in protocol v0). A push streams to a
//     quarantine on disk (bounded as it arrives, at most
//     MaxConcurrentPushes at once), every updated ref's new tree is checked
//     by a Validator (default: RepositoryChecks; compose with Validators)
//     and every other new commit by the file limits, and only then does
//     the pack join the repository and the refs move. AfterPush receives
//     an Event and can print remote: lines; LastPushes keeps each
//     repository's last push and its outcome.
//   - Follower fetches an upstream remote on an interval and on demand;
//     Watcher reports changed files of a working tree. Both, like pushes,
//     produce Events.
//
// Locking: a Repository serializes go-git object access (go-git's storage
// is not safe for concurrent use) and has one writer lock for commits,
// pushes and fetches; serving a fetch and repacking take neither. Share
// one Repository per path: Host hands out one instance per hosted name.
package gitsync
