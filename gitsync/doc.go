// Package gitsync owns the git side of Quire: a commit's tree as an
// io/fs.FS (Snapshot), changed paths between commits, the daemon's own
// commits, hosted repositories served over smart HTTP with validation
// before any ref moves, following an upstream remote and watching a working
// tree.
//
// All git work goes through go-git; the git CLI is only a test client.
//
//   - Open a repository (bare, or any directory of a work tree) and take
//     Snapshot(rev) of any revision: an fs.FS over the commit's tree,
//     read without checkout. Changes lists the paths that differ between
//     two commits (no rename detection). Reads reload go-git's pack index
//     when another process (git gc) repacked the repository.
//   - Commit writes the daemon's commits: only the trees on the written
//     paths are rebuilt, the ref moves with compare-and-swap, writers to
//     one Repository are serialized, the agent is the author and the user
//     goes in a "Quire-User:" trailer. FileWrite.Match is If-Match on a
//     file's blob hash. Repack packs the loose objects go-git writes.
//   - Host keeps bare repositories under a directory and is the smart-HTTP
//     endpoint (/<name>.git) for clone, fetch and push by the git CLI. A
//     push is parsed into an in-memory overlay (so thin packs resolve),
//     every updated ref's new tree is checked by a Validator (default:
//     RepositoryChecks; compose with Validators), and only then are
//     objects written and refs moved with compare-and-swap. AfterPush
//     receives an Event and can print remote: lines.
//   - Follower fetches an upstream remote on an interval and on demand;
//     Watcher reports changed files of a working tree. Both, like pushes,
//     produce Events.
//
// Locking: a Repository serializes go-git object access (go-git's storage
// is not safe for concurrent use) and has one writer lock for commits,
// pushes, fetches and repacks. Share one Repository per path: Host hands
// out one instance per hosted name.
package gitsync
