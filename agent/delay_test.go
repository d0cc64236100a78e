package agent_test

import (
	"testing"
	"time"

	"github.com/quirehq/quire/agent"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		path string
		want time.Duration
	}{
		{"MEMORY.md", agent.MemoryDelay},
		{"memory.md", agent.MemoryDelay},
		{"memory/2026-01-01.md", agent.MemoryDelay},
		{"agent/memory/deep/x.md", agent.MemoryDelay},
		{"users/alice/MEMORY.md", agent.MemoryDelay},
		{"users/alice/memory/2026-01-01.md", agent.MemoryDelay},
		{"skills/pdf/SKILL.md", agent.FileDelay},
		{".agents/skills/pdf/SKILL.md", agent.FileDelay},
		{"AGENTS.md", agent.FileDelay},
		{"memory", agent.FileDelay},
		{"", agent.FileDelay},
	}
	for _, tt := range tests {
		if got := agent.Delay(tt.path); got != tt.want {
			t.Errorf("Delay(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
