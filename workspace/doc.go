// Package workspace is the vocabulary every part of Quire shares about an
// agent workspace, and the one place each of its rules is written:
//
//   - file names and kinds (names.go: AGENTS.md … MEMORY.md, agent.yaml,
//     SKILL.md, the users/, memory/ and skills directories, KindOf);
//   - repository-level files and virtual files (shared.go: _shared/ and
//     its CULTURE.md, a team's _shared/teams/<team>/, DELEGATION.md,
//     TEAM.md and AVAILABILITY.md);
//   - daily logs (dailylog.go: IsDailyLog and LogDate, the one rule the
//     prompt, the memory index, the merge, retention and MCP apply);
//   - user and room ids as directory names (ids.go: EncodeID, DecodeID);
//   - the one finding type, Problem, and the rules every file obeys
//     (problem.go, rules.go, text.go), over a whole tree (checkfiles.go);
//   - the fs.FS readers: Dir and the overlay.
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
//
// It imports nothing of Quire's: every other package imports it.
package workspace
