// Package agent owns what an agent is, above the packages that read its
// parts (prompt: context files and agent.yaml; skills: SKILL.md tiers;
// memory: documents and logs):
//
//   - where the agents of a tree are (DirOf: the agent a path belongs to,
//     by the rule prompt.Open discovers them with);
//   - the skill set of an agent (Skills: its workspace tiers, the tiers
//     every agent shares and the built-ins, loaded in one place for the
//     daemon, `quire check`, the language server and the CLI);
//   - validation (Check: the one function behind `quire check`, the git
//     endpoint's push validator, the API's writes and the language
//     server's diagnostics; WorkspaceChecks adapts it to a push);
//   - the policies the git layer is given as functions: how a file both
//     sides of a merge changed is merged (Merge: daily logs as a union of
//     entries) and how long a watcher waits before reporting a change
//     (Delay: memory documents longer).
//
// It imports no git plumbing: gitsync takes its policies as values, and the
// language server gets its diagnostics here.
package agent
