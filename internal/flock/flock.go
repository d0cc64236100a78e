// Package flock owns Quire's advisory locks on files between processes:
// TryLock takes an exclusive lock on an open file without waiting. The
// lock belongs to the open file and ends when it is closed, or when the
// process ends however it ends, so a file a crash left never blocks the
// next start. Each system's way is behind a build tag with the same
// contract: flock(2) on unix, LockFileEx on Windows.
//
// It imports nothing of Quire's.
package flock
