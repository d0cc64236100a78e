// Package workspace is the vocabulary every part of Quire shares about a
// workspace on disk: how one is read without leaving it.
//
// Dir reads a working tree through an os.Root (on Linux, first with
// openat2 and RESOLVE_NO_SYMLINKS, which gives the same answers in a few
// system calls and leaves every refusal to the os.Root checks) and refuses
// everything that is not a regular file or a directory: a symbolic link
// (even one that stays inside the tree), a FIFO, a device or a socket is
// an error naming the path, never followed and never read (one swapped in
// while a file is being opened is opened without blocking, then refused).
// The CLI, the daemon's --dir source and the language server read a
// working tree only through it, so a SOUL.md that links to /etc/passwd
// never reaches a prompt and a FIFO never hangs a command.
package workspace
