package gitsync

// Source says where a new snapshot came from.
type Source string

// The sources of new snapshots.
const (
	// SourcePush is an accepted push to the endpoint.
	SourcePush Source = "push"
	// SourceUpstream is a fetch from a followed upstream remote.
	SourceUpstream Source = "upstream"
	// SourceWorkTree is a change to files in a watched working tree.
	SourceWorkTree Source = "worktree"
)

// Event announces a new snapshot. Pushes and upstream fetches report the
// refs that moved; a watched working tree reports the files that changed
// (the snapshot is then the directory itself, not a commit).
type Event struct {
	Source Source
	// Name is the hosted repository's name (push), or the path of the
	// followed repository or watched directory.
	Name string
	// Repository is the repository whose refs moved (nil for a work
	// tree).
	Repository *Repository
	// User is the authenticated pusher ("" otherwise).
	User string
	// Refs are the refs that moved.
	Refs []RefUpdate
	// Paths are the changed files of a work tree, slash-separated and
	// relative to its root, sorted. Rescan is set instead when events
	// were lost (queue overflow), or could not be seen (when the watcher
	// starts): consider every file changed.
	Paths  []string
	Rescan bool
}
