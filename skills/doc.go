// Package skills owns agent skills: loading SKILL.md files from the five
// tiers (workspace skills/, workspace .agents/skills/, ~/.agents/skills/,
// managed skills, built-in skills), parsing their front matter, resolving
// overrides between tiers, BM25 and hybrid search over them, hot reload and
// the access rules that decide who may see a skill.
//
// The pieces:
//
//   - Options.Sources names the tiers; every tier is read through an fs.FS.
//     Load turns sources into a Set: the winning skill per slug (highest
//     tier first), a Shadow record for every skill hidden by a higher tier,
//     and every Problem (path, line, severity, code, message). A SKILL.md
//     with an error does not load and shadows nothing; warnings load.
//     A tier holds <slug>/SKILL.md and, in a directory without a SKILL.md,
//     <group>/<slug>/SKILL.md (OpenClaw's grouped layout); the directory
//     name is the slug and wins over a different name in the front matter.
//   - ParseDocument parses one SKILL.md (BOM and CRLF accepted): plain
//     "key: value" front matter with a small scanner, anything else with
//     yaml.v3; a fuzz test holds the two to the same results.
//   - A Set is immutable and holds a BM25 index (memory/bm25) over name +
//     description, built on the first search, so Set.Search allocates
//     nothing per skill and Set.PromptSkills, List and Show never touch
//     the disk (nor build the index).
//   - Request carries who asks (agent, its repository, user) and the
//     agent.yaml allow list with an optional per-request Filter that
//     replaces it; Access holds the visibility rules of the shared skills
//     repository (SharedSource): public, internal or private in each
//     SKILL.md's front matter, private skills granted to agents and
//     repositories in its grants file (ParseGrants); CheckShared validates
//     the repository as a push is.
//   - HybridSearch fuses BM25 and embedding cosine; Vectors caches the
//     skills' vectors by model and skill version (content hash).
//   - Watcher swaps in a new Set, with a higher version, 500 ms after the
//     last change under any tier directory on disk.
//   - CheckAgent lists a workspace's SKILL.md problems for `quire check`,
//     the git endpoint and the language server; Set.UnknownAllowed warns
//     about agent.yaml allow-list names that match no skill.
//
// The package is pure apart from reading and watching directories: no
// network, no database driver, no os/exec.
package skills
