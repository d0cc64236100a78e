// Package templates owns Quire's default workspace files (AGENTS.md,
// SOUL.md, TOOLS.md, IDENTITY.md, USER.md, USER_PREDEFINED.md, HEARTBEAT.md,
// BOOTSTRAP.md and BOOTSTRAP_PREDEFINED.md), embedded in the binary, and the
// rules for seeding them: which files an agent of each type gets, which
// files each user gets on first contact, and creation that never overwrites.
package templates
