// Package skills owns agent skills: loading SKILL.md files from the five
// tiers (workspace skills/, workspace .agents/skills/, ~/.agents/skills/,
// managed skills, built-in skills), parsing their front matter, resolving
// overrides between tiers, BM25 and hybrid search over them, hot reload and
// the access rules that decide who may see a skill.
//
// The package is pure apart from watching directories: no network, no
// database driver, no os/exec.
package skills
