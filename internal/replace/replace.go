// Package replace owns putting a finished file in the place of another:
// File renames a temporary file over its destination so a reader sees
// the old file or the new one, never a part. Each system's way is behind
// a build tag with the same contract: rename(2) on unix; on Windows
// MoveFileEx with MOVEFILE_REPLACE_EXISTING and MOVEFILE_WRITE_THROUGH,
// retried for a moment while another handle holds the destination open
// (Windows refuses to replace such a file, where unix lets the reader
// keep the old one).
//
// It imports nothing of Quire's.
package replace
