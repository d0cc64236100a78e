// Package prompt owns what an agent's system prompt is made of: reading an
// agent workspace through io/fs.FS (discovery, agent.yaml, per-user
// directories and the per-user merge), choosing which context files a
// session sees, charging them against the per-file and total budgets,
// truncating with a truthful marker, and assembling the sections of the
// system prompt together with a Report of exactly what was injected and cut.
// Budgets count chars or, with budget.unit tokens, exact o200k tokens
// (budgetunit.go, budgettokens.go). Besides an agent's own files it
// injects the repository's _shared/ files and its team's (shared.go), and
// it derives the virtual files DELEGATION.md, TEAM.md and AVAILABILITY.md
// from the agents' agent.yaml (virtual.go).
//
// The package is pure: it never touches the network, a database or the
// operating system's file system directly. Callers hand it an fs.FS: the
// disk (CLI), a git commit's tree (daemon) or the disk overlaid with unsaved
// editor buffers (language server), so every consumer assembles the same
// bytes from the same files.
package prompt
