package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestStampOf(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/quirehq/quire", Version: "v0.0.0-20261126051220-1293db5abcde+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "1293db5abcdef"},
			{Key: "vcs.time", Value: "2026-11-26T05:12:20Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	devel := &debug.BuildInfo{Main: debug.Module{Path: "github.com/quirehq/quire", Version: "(devel)"}}
	tests := []struct {
		name    string
		v, c, d string
		info    *debug.BuildInfo
		want    stamp
	}{
		{"make dist stamps all three", "v1.2.0", "abc", "2026-01-02T03:04:05Z", vcs,
			stamp{"v1.2.0", "abc", "2026-01-02T03:04:05Z"}},
		{"go build in a checkout", "", "", "", vcs,
			stamp{"v0.0.0-20261126051220-1293db5abcde+dirty", "1293db5abcdef (modified)", "2026-11-26T05:12:20Z"}},
		{"no vcs information", "", "", "", devel, stamp{"devel", "unknown", "unknown"}},
		{"no build information", "", "", "", nil, stamp{"devel", "unknown", "unknown"}},
		{"a stamped version with Go's commit", "v2.0.0", "", "", vcs,
			stamp{"v2.0.0", "1293db5abcdef (modified)", "2026-11-26T05:12:20Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stampOf(tt.v, tt.c, tt.d, tt.info); got != tt.want {
				t.Fatalf("stampOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestVersionCommandPrintsTheStamp(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out}
	if err := versionCommand().run(t.Context(), e, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"quire ", "commit ", "date ", "go ", "tokenizer "} {
		if !strings.Contains(out.String(), "\n"+prefix) && !strings.HasPrefix(out.String(), prefix) {
			t.Errorf("version output lacks a %q line:\n%s", prefix, out.String())
		}
	}
}
