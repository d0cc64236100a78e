package workspace

import "testing"

// KindOf is the one answer to "what is this path" (issue #13, item 14):
// every kind, the per-user mirror of each, and the near misses.
func TestKindOf(t *testing.T) {
	tests := []struct {
		rel  string
		want Kind
	}{
		{"agent.yaml", KindConfig},
		{"AGENTS.md", KindPersona},
		{"SOUL.md", KindPersona},
		{"IDENTITY.md", KindPersona},
		{"TOOLS.md", KindPersona},
		{"USER_PREDEFINED.md", KindContext},
		{"HEARTBEAT.md", KindContext},
		{"USER.md", KindPerUser},
		{"BOOTSTRAP.md", KindPerUser},
		{"MEMORY.md", KindMemory},
		{"memory.md", KindMemory},
		{"memory/notes.md", KindMemory},
		{"memory/deep/x.md", KindMemory},
		{"memory/2026-11-22.md", KindDailyLog},
		{"skills/pdf/SKILL.md", KindSkill},
		{".agents/skills/pdf/SKILL.md", KindSkill},

		// A user's directory mirrors the agent's.
		{"users/alice/USER.md", KindPerUser},
		{"users/alice/MEMORY.md", KindMemory},
		{"users/alice/memory/2026-11-22.md", KindDailyLog},
		{"users/alice/SOUL.md", KindPersona},

		// Near misses.
		{"soul.md", KindOther},              // names are case-sensitive
		{"memory/notes.txt", KindOther},     // memory is Markdown
		{"memory", KindOther},               // the directory
		{"memory/2026-1-22.md", KindMemory}, // not a date: a memory document
		{"memory/2026-11-22.MD", KindOther}, // not .md
		{"skills/SKILL.md", KindOther},      // no slug
		{"skills/pdf/deep/SKILL.md", KindOther},
		{"skills/pdf/README.md", KindOther},
		{"users/alice", KindOther},
		{"users//MEMORY.md", KindOther},
		{"rooms/r/AGENTS.md", KindOther},
		{"notes.md", KindOther},
		{"", KindOther},
	}
	for _, tt := range tests {
		if got := KindOf(tt.rel); got != tt.want {
			t.Errorf("KindOf(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func TestKindIsMemory(t *testing.T) {
	for k := KindOther; k <= KindSkill; k++ {
		want := k == KindMemory || k == KindDailyLog
		if got := k.IsMemory(); got != want {
			t.Errorf("%v.IsMemory() = %v, want %v", k, got, want)
		}
		if k.String() == "unknown kind" {
			t.Errorf("kind %d has no name", k)
		}
	}
}
