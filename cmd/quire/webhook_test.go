package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadWebhookSecret(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want, err string
	}{
		{"newline", "It's a Secret\n", "It's a Secret", ""},
		{"spaces", "  s3cret \r\n", "s3cret", ""},
		{"empty", "\n", "", "is empty"},
		{"missing", "", "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if tc.name != "missing" {
				if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readWebhookSecret(p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--webhook-secret-file") {
					t.Fatalf("err %v, want one naming the flag and %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
