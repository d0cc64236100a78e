package prompt

import "github.com/quirehq/quire/prompt/workspace"

// ErrBadID is returned for a user or room id that cannot name a directory
// (workspace.ErrBadID).
var ErrBadID = workspace.ErrBadID

// EncodeID turns an opaque user or room id into a single path-safe
// directory name: workspace.EncodeID.
func EncodeID(id string) (string, error) { return workspace.EncodeID(id) }

// DecodeID reverses EncodeID: workspace.DecodeID.
func DecodeID(name string) (string, error) { return workspace.DecodeID(name) }
