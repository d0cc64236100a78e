// Package gitsync owns the git side of Quire: a commit's tree as an
// io/fs.FS (Snapshot), changed paths between commits, the daemon's own
// commits, hosted repositories served over smart HTTP with validation
// before any ref moves, following an upstream remote and watching a working
// tree.
package gitsync
